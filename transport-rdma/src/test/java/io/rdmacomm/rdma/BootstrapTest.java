package io.rdmacomm.rdma;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmacomm.api.Endpoint;
import io.rdmacomm.api.HandshakeException;
import io.rdmacomm.rdma.spi.RdmaChannel;
import io.rdmacomm.rdma.spi.RdmaNode;
import io.rdmacomm.rdma.spi.RdmaProvider;
import io.rdmacomm.testkit.HostileInputs;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The bootstrap against the in-memory provider: crafted inputs, the ring size cap, refusals, a lost socket. */
@Timeout(60)
class BootstrapTest {
    private final InMemoryProvider provider = new InMemoryProvider();
    private RdmaCommunicator server;
    private RdmaCommunicator client;
    private RdmaCommunicator accepted;

    @AfterEach
    void closeAll() {
        for (RdmaCommunicator c : new RdmaCommunicator[] {client, accepted, server}) {
            if (c != null) {
                c.close();
            }
        }
    }

    private void serve(String options) throws Exception {
        server = new RdmaCommunicator(Endpoint.parse("rdma://127.0.0.1:0" + options), provider);
        server.serve();
    }

    private void connectAndExchange(String clientOptions) throws Exception {
        client = new RdmaCommunicator(Endpoint.parse("rdma://" + server.endpoint().authority() + clientOptions),
                provider);
        client.connect();
        accepted = (RdmaCommunicator) server.accept();
        client.write(ByteBuffer.wrap(new byte[] {1, 2, 3}));
        client.sync();
        ByteBuffer b = ByteBuffer.allocate(3);
        accepted.readFully(b);
        assertEquals(3, b.get(2));
    }

    @Test
    void craftedInputsAreDroppedAndTheServerServesOn() throws Exception {
        serve("?handshakeTimeout=1s&acceptTimeout=20s");
        HostileInputs.sendEach(new InetSocketAddress("127.0.0.1", server.endpoint().port()),
                HostileInputs.crafted(HostileInputs.RDMA_BOOTSTRAP_HEADER), Duration.ofSeconds(10));
        connectAndExchange("");
        assertEquals(3, provider.nodeUsers.get(),
                "only the live connection's two sides and the server's standing node hold the node");
    }

    @Test
    void theServerCapsTheRingSizeAClientAsksFor() throws Exception {
        serve("?ringSize=64k");
        connectAndExchange("?ringSize=512m&maxRegistered=2g");
        // ring and staging of 64k each on the server, however large the client's wish
        assertEquals(2 * 64 * 1024, accepted.statistics().registeredBytes());
        assertEquals(2 * 64 * 1024, client.statistics().registeredBytes());
    }

    @Test
    void aServerOfAnotherProviderRefusesByName() throws Exception {
        HandshakeException e = refusedAs("other");
        assertTrue(e.getMessage().contains("refused the connection: provider other asked for, this server runs"
                + " inmem"), e.getMessage());
    }

    @Test
    void aServerOfAnotherWireFamilyNamesBothFamilies() throws Exception {
        HandshakeException e = refusedAs("verbs");
        assertTrue(e.getMessage().contains("provider verbs asked for, this server runs inmem (wire family verbs,"
                + " this server's is inmem: they cannot talk to each other)"), e.getMessage());
    }

    /** A client of provider {@code name} (its own wire family) connecting to the in-memory server: refused. */
    private HandshakeException refusedAs(String name) throws Exception {
        serve("");
        InMemoryProvider other = new InMemoryProvider() {
            @Override
            public String name() {
                return name;
            }
        };
        client = new RdmaCommunicator(server.endpoint(), other);
        HandshakeException e = assertThrows(HandshakeException.class, () -> client.connect());
        assertEquals(0, other.nodeUsers.get());
        return e;
    }

    /** Like ucx-jucx and ucx-ffm: another name, the same wire format (here: the same in-memory world). */
    @Test
    void aServerServesAnotherProviderOfItsWireFamily() throws Exception {
        serve("");
        RdmaProvider sibling = new RdmaProvider() {
            @Override
            public String name() {
                return "inmem-sibling";
            }

            @Override
            public String wireFamily() {
                return provider.name();
            }

            @Override
            public Optional<String> unavailabilityCause() {
                return Optional.empty();
            }

            @Override
            public RdmaNode node(InetAddress localInterface, RdmaChannel.Role side) throws IOException {
                return provider.node(localInterface, side);
            }
        };
        client = new RdmaCommunicator(server.endpoint(), sibling);
        client.connect();
        accepted = (RdmaCommunicator) server.accept();
        assertEquals("inmem-sibling", client.providerName());
        assertEquals("inmem", accepted.providerName());
        client.write(ByteBuffer.wrap(new byte[] {4, 5}));
        client.sync();
        ByteBuffer b = ByteBuffer.allocate(2);
        accepted.readFully(b);
        assertEquals(5, b.get(1));
    }

    @Test
    void theEndOfThePeersBootstrapSocketFailsABlockedRead() throws Exception {
        serve("");
        connectAndExchange("");
        CompletableFuture<Integer> read = CompletableFuture.supplyAsync(() -> {
            try {
                return accepted.read(ByteBuffer.allocate(8));
            } catch (java.io.IOException e) {
                throw new java.util.concurrent.CompletionException(e);
            }
        });
        // the client "dies": its channel goes silent, only its bootstrap socket ends (with its close)
        provider.channels.values().stream().filter(c -> c.name.startsWith("client")).findFirst().orElseThrow()
                .mute();
        client.close();
        ExecutionException e = assertThrows(ExecutionException.class, () -> read.get(10, TimeUnit.SECONDS));
        assertInstanceOf(java.io.IOException.class, e.getCause().getCause());
        assertTrue(e.getCause().getCause().getMessage().contains("bootstrap connection ended"),
                e.getCause().getCause().getMessage());
    }
}
