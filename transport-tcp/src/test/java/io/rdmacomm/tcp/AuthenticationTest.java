package io.rdmacomm.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.Communicators;
import io.rdmacomm.api.Endpoint;
import io.rdmacomm.api.auth.AuthenticationException;
import io.rdmacomm.api.auth.MutualAuthentication;
import io.rdmacomm.api.auth.SharedSecret;
import io.rdmacomm.testkit.SecretFiles;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Shared-secret authentication in the tcp:// handshake, against real and hand-played peers. */
@Timeout(30)
class AuthenticationTest {
    private final ExecutorService helper = Executors.newCachedThreadPool();
    @TempDir
    Path dir;
    private Path secret;
    private Path otherSecret;

    @BeforeEach
    void writeSecrets() throws Exception {
        SecretFiles files = SecretFiles.in(dir);
        secret = files.right();
        otherSecret = files.wrong();
    }

    @AfterEach
    void stopHelper() throws InterruptedException {
        helper.shutdownNow();
        assertTrue(helper.awaitTermination(10, TimeUnit.SECONDS));
    }

    private Communicator serve(Path secretFile) throws Exception {
        return Communicators.serve("tcp://127.0.0.1:0" + (secretFile == null ? "" : "?secretFile=" + secretFile));
    }

    private static String client(Communicator server, Path secretFile) {
        return "tcp://127.0.0.1:" + server.endpoint().port() + (secretFile == null ? "" : "?secretFile=" + secretFile);
    }

    private void assertConnects(Communicator server, Path clientSecret) throws Exception {
        Future<Communicator> accepted = helper.submit(server::accept);
        try (Communicator c = Communicators.connect(client(server, clientSecret));
                Communicator peer = accepted.get(10, TimeUnit.SECONDS)) {
            c.write(ByteBuffer.wrap(new byte[] {5}));
            c.sync();
            ByteBuffer got = ByteBuffer.allocate(1);
            peer.readFully(got);
            assertEquals(5, got.get(0));
        }
    }

    @Test
    void peersWithTheSameSecretConnect() throws Exception {
        try (Communicator server = serve(secret)) {
            assertConnects(server, secret);
        }
    }

    @Test
    void aWrongSecretIsRefusedClearlyAndTheServerServesOn() throws Exception {
        try (Communicator server = serve(secret)) {
            AuthenticationException e = assertThrows(AuthenticationException.class,
                    () -> Communicators.connect(client(server, otherSecret)));
            assertTrue(e.getMessage().contains("refused our authentication"), e.getMessage());
            assertConnects(server, secret);
        }
    }

    @Test
    void aClientWithoutTheSecretIsToldTheServerRequiresOne() throws Exception {
        try (Communicator server = serve(secret)) {
            AuthenticationException e = assertThrows(AuthenticationException.class,
                    () -> Communicators.connect(client(server, null)));
            assertTrue(e.getMessage().contains("requires authentication"), e.getMessage());
            assertConnects(server, secret);
        }
    }

    @Test
    void aClientWithoutTheSecretWhoseFirstBytesWentWithItsHelloIsStillToldWhy() throws Exception {
        try (Communicator server = serve(secret)) {
            // the server refuses with its first answer while the client's first bytes sit unread in its socket;
            // the client must still learn why (20 tries for the race between its read and the server's close)
            for (int i = 0; i < 20; i++) {
                try (Communicator c = Communicators.open(client(server, null))) {
                    AuthenticationException e = assertThrows(AuthenticationException.class,
                            () -> c.connect(ByteBuffer.wrap(new byte[1000])));
                    assertTrue(e.getMessage().contains("requires authentication"), "try " + i + ": " + e.getMessage());
                }
            }
            assertConnects(server, secret);
        }
    }

    @Test
    void aClientWithASecretRefusesAServerWithoutOne() throws Exception {
        try (Communicator server = serve(null)) {
            AuthenticationException e = assertThrows(AuthenticationException.class,
                    () -> Communicators.connect(client(server, secret)));
            assertTrue(e.getMessage().contains("has no shared secret"), e.getMessage());
            assertConnects(server, null);
        }
    }

    @Test
    void aReplayedTranscriptIsRefused() throws Exception {
        SharedSecret key = SharedSecret.of(Endpoint.parse("tcp://h:1?secretFile=" + secret)).orElseThrow();
        try (Communicator server = serve(secret)) {
            Future<Communicator> accepted = helper.submit(server::accept);
            byte[] recorded;
            try (SocketChannel first = Raw.connect(server.endpoint().port())) {
                Raw.writeAll(first, Raw.hello(Handshake.MAGIC, Handshake.VERSION, Handshake.FLAG_AUTH));
                assertEquals(Handshake.STATUS_OK, Raw.readExactly(first, 8).getShort(6));
                byte[] challenge = Raw.readExactly(first, MutualAuthentication.CHALLENGE_BYTES).array();
                MutualAuthentication.Client client = new MutualAuthentication.Client(key, "server");
                recorded = client.proof(challenge);
                Raw.writeAll(first, ByteBuffer.wrap(recorded));
                client.check(Raw.readExactly(first, MutualAuthentication.ANSWER_BYTES).array());
                accepted.get(10, TimeUnit.SECONDS).close();
            }
            try (SocketChannel replay = Raw.connect(server.endpoint().port())) {
                Raw.writeAll(replay, Raw.hello(Handshake.MAGIC, Handshake.VERSION, Handshake.FLAG_AUTH));
                Raw.readExactly(replay, 8 + MutualAuthentication.CHALLENGE_BYTES);
                Raw.writeAll(replay, ByteBuffer.wrap(recorded));
                assertEquals(1, Raw.readExactly(replay, MutualAuthentication.ANSWER_BYTES).get(0), "refused");
                assertTrue(Raw.hungUp(replay));
            }
            assertConnects(server, secret);
        }
    }
}
