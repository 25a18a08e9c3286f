package io.rdmacomm.rdma;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmacomm.api.Endpoint;
import io.rdmacomm.rdma.spi.RdmaChannel;
import io.rdmacomm.rdma.spi.RdmaNode;
import io.rdmacomm.rdma.spi.RdmaProvider;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The bootstrap server under load and faults, against the in-memory provider: failures of one peer (up to an
 * {@link Error}) and of whole accept rounds are survived, and full handshake slots make a silent peer give way.
 */
@Timeout(60)
class BootstrapLoadTest {
    private final InMemoryProvider provider = new InMemoryProvider();
    private final List<AutoCloseable> open = new ArrayList<>();
    private RdmaCommunicator server;

    @AfterEach
    void closeAll() throws Exception {
        for (int i = open.size() - 1; i >= 0; i--) {
            open.get(i).close();
        }
    }

    private void serve(RdmaProvider p, String options) throws Exception {
        server = new RdmaCommunicator(Endpoint.parse("rdma://127.0.0.1:0" + options), p);
        open.add(server);
        server.serve();
    }

    /** Connects a client, accepts it and moves three bytes from the client to the server. */
    private void connectAndExchange() throws Exception {
        RdmaCommunicator client = new RdmaCommunicator(server.endpoint(), provider);
        open.add(client);
        client.connect();
        RdmaCommunicator accepted = (RdmaCommunicator) server.accept();
        open.add(accepted);
        client.write(ByteBuffer.wrap(new byte[] {1, 2, 3}));
        client.sync();
        ByteBuffer b = ByteBuffer.allocate(3);
        accepted.readFully(b);
        assertEquals(3, b.get(2));
    }

    /**
     * The in-memory provider, but the server's node fails for the first throwables given (a null: that call
     * succeeds). The first call is the server's standing node, made as it starts.
     */
    private RdmaProvider failingFirst(Throwable... failures) {
        AtomicInteger calls = new AtomicInteger();
        return new RdmaProvider() {
            @Override
            public String name() {
                return provider.name();
            }

            @Override
            public Optional<String> unavailabilityCause() {
                return Optional.empty();
            }

            @Override
            public RdmaNode node(InetAddress localInterface, RdmaChannel.Role side) throws IOException {
                int i = calls.getAndIncrement();
                if (side == RdmaChannel.Role.PASSIVE && i < failures.length && failures[i] != null) {
                    Throwable t = failures[i];
                    if (t instanceof IOException e) {
                        throw e;
                    }
                    if (t instanceof RuntimeException e) {
                        throw e;
                    }
                    throw (Error) t;
                }
                return provider.node(localInterface, side);
            }
        };
    }

    @Test
    void aPeerWhoseSetUpThrowsEvenAnErrorIsDroppedAloneAndTheServerServesOn() throws Exception {
        serve(failingFirst(null, new IOException("injected: node"), new IllegalStateException("injected: node"),
                new OutOfMemoryError("injected: node")), "?acceptTimeout=20s");
        for (int i = 0; i < 3; i++) {
            RdmaCommunicator client = new RdmaCommunicator(server.endpoint(), provider);
            open.add(client);
            assertThrows(IOException.class, client::connect, "client " + i + " of a server whose node failed");
        }
        connectAndExchange();
        assertEquals(3, provider.nodeUsers.get(),
                "only the live connection's two sides and the server's standing node hold the node");
    }

    @Test
    void aServerWhoseNodeFailsAtStartServesAndItsNodeGoesWithIt() throws Exception {
        serve(failingFirst(new IOException("injected: node at start")), "?acceptTimeout=20s");
        connectAndExchange();
        assertEquals(2, provider.nodeUsers.get(), "no standing node: the live connection's two sides");
        closeAll();
        open.clear();
        assertEquals(0, provider.nodeUsers.get(), "every node released");

        serve(provider, "?acceptTimeout=20s");
        assertEquals(1, provider.nodeUsers.get(), "the server's standing node, made as it started");
        connectAndExchange();
        assertEquals(3, provider.nodeUsers.get(), "the connection's two sides and the standing node");
        closeAll();
        open.clear();
        assertEquals(0, provider.nodeUsers.get(), "closing the server released its standing node");
    }

    @Test
    void failuresOfWholeAcceptRoundsAndOfAcceptsAreSurvived() throws Exception {
        serve(provider, "?acceptTimeout=20s");
        BootstrapServer b = server.bootstrapServer();
        AtomicInteger thrown = new AtomicInteger();
        b.faults = () -> {
            int n = thrown.incrementAndGet();
            if (n > 6) {
                b.faults = null;
                return;
            }
            // rounds and accepts alike: an unchecked exception, then an Error
            if (n % 2 == 0) {
                throw new StackOverflowError("injected: accept round " + n);
            }
            throw new IllegalStateException("injected: accept round " + n);
        };
        connectAndExchange();
        assertTrue(thrown.get() > 6, "the injected faults ran: " + thrown.get());
        connectAndExchange();
    }

    @Test
    void whenTheHandshakeSlotsAreFullANewcomerReplacesTheSilentLongest() throws Exception {
        serve(provider, "?maxHandshakes=2&handshakeTimeout=30s&acceptTimeout=20s");
        assertEquals(2, server.bootstrapServer().maxHandshakes());
        InetSocketAddress at = new InetSocketAddress("127.0.0.1", server.endpoint().port());
        List<Socket> silent = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            Socket s = new Socket();
            open.add(s);
            s.connect(at);
            s.setSoTimeout(20_000);
            silent.add(s);
        }
        long start = System.nanoTime();
        connectAndExchange();
        long tookMillis = (System.nanoTime() - start) / 1_000_000;
        // the handshake timeout is 30 s: the client was served because silent peers gave way, not timed out
        assertTrue(tookMillis < 10_000, "the client waited " + tookMillis + " ms");
        assertTrue(server.bootstrapServer().evicted() >= 2, "evicted " + server.bootstrapServer().evicted());
        assertEquals(-1, silent.get(0).getInputStream().read(), "the first silent peer was dropped");
    }

    @Test
    void handshakeSlotsFitTheDescriptorLimit() {
        assertEquals(1024, BootstrapServer.handshakeSlots(1024, -1, 40));
        assertEquals(1024, BootstrapServer.handshakeSlots(1024, 20_000, 100));
        assertEquals((256 - 60 - 64) / 4, BootstrapServer.handshakeSlots(1024, 256, 60));
        assertEquals(8, BootstrapServer.handshakeSlots(1024, 100, 90), "at least 8");
        assertEquals(2, BootstrapServer.handshakeSlots(2, 100, 90), "never more than asked for");
    }
}
