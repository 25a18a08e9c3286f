package io.rdmacomm.rdma;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmacomm.api.Endpoint;
import io.rdmacomm.api.auth.AuthenticationException;
import io.rdmacomm.api.auth.MutualAuthentication;
import io.rdmacomm.testkit.SecretFiles;
import java.io.EOFException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Shared-secret authentication in the rdma:// bootstrap (the component tcp:// uses), against a provider that records
 * every peer address handed to it: an unauthenticated peer's node address never reaches the provider.
 */
@Timeout(60)
class BootstrapAuthenticationTest {
    private final InMemoryProvider provider = new InMemoryProvider();
    @TempDir
    Path dir;
    private Path secret;
    private Path otherSecret;
    private RdmaCommunicator server;
    private RdmaCommunicator client;
    private RdmaCommunicator accepted;

    @BeforeEach
    void writeSecrets() throws Exception {
        SecretFiles files = SecretFiles.in(dir);
        secret = files.right();
        otherSecret = files.wrong();
    }

    @AfterEach
    void closeAll() {
        for (RdmaCommunicator c : new RdmaCommunicator[] {client, accepted, server}) {
            if (c != null) {
                c.close();
            }
        }
    }

    private void serve(Path secretFile) throws Exception {
        server = new RdmaCommunicator(Endpoint.parse("rdma://127.0.0.1:0?acceptTimeout=20s&handshakeTimeout=5s"
                + (secretFile == null ? "" : "&secretFile=" + secretFile)), provider);
        server.serve();
    }

    private RdmaCommunicator client(Path secretFile) {
        return new RdmaCommunicator(Endpoint.parse("rdma://" + server.endpoint().authority() + "?connectTimeout=10s"
                + (secretFile == null ? "" : "&secretFile=" + secretFile)), provider);
    }

    private void assertServed(Path clientSecret) throws Exception {
        client = client(clientSecret);
        client.connect();
        accepted = (RdmaCommunicator) server.accept();
        client.write(ByteBuffer.wrap(new byte[] {7}));
        client.sync();
        ByteBuffer b = ByteBuffer.allocate(1);
        accepted.readFully(b);
        assertEquals(7, b.get(0));
    }

    /** What the provider saw of peers' addresses: nothing while nobody has been authenticated. */
    private void assertNoAddressReachedTheProvider() {
        assertEquals(List.of(), provider.connectCalls, "peer addresses handed to the provider");
    }

    @Test
    void peersWithTheSameSecretAreServed() throws Exception {
        serve(secret);
        assertServed(secret);
        assertEquals(2, provider.connectCalls.size(), provider.connectCalls.toString());
    }

    @Test
    void aWrongSecretIsRefusedClearlyAndNeverReachesTheProvider() throws Exception {
        serve(secret);
        AuthenticationException e = assertThrows(AuthenticationException.class, () -> client(otherSecret).connect());
        assertTrue(e.getMessage().contains("refused our authentication"), e.getMessage());
        assertNoAddressReachedTheProvider();
        assertServed(secret);
    }

    @Test
    void aClientWithoutTheSecretIsToldTheServerRequiresOne() throws Exception {
        serve(secret);
        AuthenticationException e = assertThrows(AuthenticationException.class, () -> client(null).connect());
        assertTrue(e.getMessage().contains("requires authentication"), e.getMessage());
        assertNoAddressReachedTheProvider();
        assertServed(secret);
    }

    @Test
    void aClientWithASecretRefusesAServerWithoutOne() throws Exception {
        serve(null);
        AuthenticationException e = assertThrows(AuthenticationException.class, () -> client(secret).connect());
        assertTrue(e.getMessage().contains("has no shared secret"), e.getMessage());
        assertNoAddressReachedTheProvider();
        assertServed(null);
    }

    /** A hand-played client that offers authentication and sends a made-up proof: refused, hung up on. */
    @Test
    void aForgedProofIsAnsweredWithARefusalAndAHangUp() throws Exception {
        serve(secret);
        try (SocketChannel raw = SocketChannel.open(new InetSocketAddress("127.0.0.1", server.endpoint().port()))) {
            ByteBuffer hello = new BootstrapHello(provider.name(), BootstrapFrame.FLAG_AUTHENTICATION,
                    new byte[] {1, 2, 3}, 1, 65536).encode();
            while (hello.hasRemaining()) {
                raw.write(hello);
            }
            BootstrapFrame challenge = new BootstrapFrame();
            challenge.readBy(raw, System.nanoTime() + 10_000_000_000L, "server", "the test");
            assertEquals(BootstrapFrame.AUTH, challenge.type());
            assertEquals(MutualAuthentication.CHALLENGE_BYTES, challenge.body().remaining());
            ByteBuffer proof = BootstrapFrame.frame(BootstrapFrame.AUTH,
                    ByteBuffer.allocate(MutualAuthentication.PROOF_BYTES));
            while (proof.hasRemaining()) {
                raw.write(proof);
            }
            BootstrapFrame answer = new BootstrapFrame();
            answer.readBy(raw, System.nanoTime() + 10_000_000_000L, "server", "the test");
            assertEquals(1, answer.body().get(0), "refused");
            assertThrows(EOFException.class, () -> new BootstrapFrame().readBy(raw,
                    System.nanoTime() + 10_000_000_000L, "server", "the test"));
        }
        assertNoAddressReachedTheProvider();
        assertServed(secret);
    }
}
