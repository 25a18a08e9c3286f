package io.rdmacomm.systemtests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.Communicators;
import io.rdmacomm.servercomm.ServerMain;
import io.rdmacomm.session.SessionClient;
import io.rdmacomm.session.SessionReply;
import io.rdmacomm.session.SessionRequest;
import io.rdmacomm.session.SessionStatus;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * servercomm and clientcomm as separate JVMs over {@code tcp://} on loopback, started from this test's class
 * path with the running JVM's {@code java}: what a user gets from the launchers.
 */
@Timeout(120)
class EndToEndTest {
    private static final long CLIENT_SECONDS = Jvms.CLIENT_SECONDS;

    @TempDir
    Path dir;

    private Process server;
    private String endpoint;

    @BeforeEach
    void startServer() throws Exception {
        server = Jvms.java(ServerMain.class, List.of("--endpoint", "tcp://127.0.0.1:0"))
                .redirectError(dir.resolve("server.err").toFile())
                .start();
        endpoint = Jvms.awaitListening(server);
    }

    @AfterEach
    void stopServer() throws Exception {
        if (server.isAlive()) {
            server.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
    }

    @Test
    void helloPrintsTheReply() throws Exception {
        Jvms.Result r = client("--endpoint", endpoint, "hello", "--message", "hello over tcp");
        assertEquals(0, r.code(), r.toString());
        assertEquals(List.of("hello over tcp"), r.out());
        assertEquals(List.of(), r.err());
    }

    @Test
    void echoOf64kMessagesIsVerified() throws Exception {
        Jvms.Result r = client("--endpoint", endpoint, "echo", "--size", "64k", "--count", "100");
        assertEquals(0, r.code(), r.toString());
        assertEquals(1, r.out().size(), r.toString());
        assertTrue(r.out().get(0).matches("echo: 100 messages of 65536 bytes, 6553600 bytes each way in [0-9.]+ s,"
                + " [0-9.]+ MB/s, all verified"), r.toString());
    }

    @Test
    void echoOfMessagesLargerThanTheSocketBuffersDoesNotDeadlock() throws Exception {
        Jvms.Result r = client("--endpoint", endpoint, "echo", "--size", "8m", "--count", "4");
        assertEquals(0, r.code(), r.toString());
        assertTrue(r.out().get(0).contains("4 messages of 8388608 bytes"), r.toString());
    }

    @Test
    void serverServesSeveralClientsAtOnce() throws Exception {
        List<CompletableFuture<Jvms.Result>> clients = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            clients.add(CompletableFuture.supplyAsync(() -> {
                try {
                    return client("--endpoint", endpoint, "echo", "--size", "1k", "--count", "500");
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            }));
        }
        for (CompletableFuture<Jvms.Result> c : clients) {
            Jvms.Result r = c.get(CLIENT_SECONDS * 2, TimeUnit.SECONDS);
            assertEquals(0, r.code(), r.toString());
        }
    }

    @Test
    void badSessionRequestIsAnsweredAndTheServerGoesOnServing() throws Exception {
        try (Communicator raw = Communicators.connect(endpoint)) {
            raw.write(ByteBuffer.wrap(new byte[] {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}));
            raw.sync();
            SessionReply reply = SessionReply.read(raw);
            assertEquals(SessionStatus.BAD_MAGIC, reply.status());
            assertTrue(reply.message().contains("0x01020304"), reply.message());
        }
        Jvms.Result r = client("--endpoint", endpoint, "hello");
        assertEquals(0, r.code(), r.toString());
        assertEquals(List.of("hello from clientcomm"), r.out());
    }

    @Test
    void badUriIsOneLineOnStderr() throws Exception {
        Jvms.Result r = client("--endpoint", "tcp://127.0.0.1:99999", "hello");
        assertEquals(2, r.code(), r.toString());
        assertEquals(1, r.err().size(), r.toString());
        assertTrue(r.err().get(0).startsWith("clientcomm: ") && r.err().get(0).contains("99999"), r.toString());
    }

    @Test
    void refusedConnectionIsOneLineNamingTheEndpoint() throws Exception {
        int closedPort;
        try (ServerSocket s = new ServerSocket(0)) {
            closedPort = s.getLocalPort();
        }
        Jvms.Result r = client("--endpoint", "tcp://127.0.0.1:" + closedPort, "hello");
        assertNotEquals(0, r.code(), r.toString());
        assertEquals(1, r.err().size(), r.toString());
        assertTrue(r.err().get(0).startsWith("clientcomm: ") && r.err().get(0).contains("127.0.0.1:" + closedPort),
                r.toString());
        assertEquals(List.of(), r.out());
    }

    @Test
    void portInUseIsOneLineFromServercomm() throws Exception {
        Process second = Jvms.java(ServerMain.class, List.of("--endpoint", endpoint)).start();
        if (!second.waitFor(CLIENT_SECONDS, TimeUnit.SECONDS)) {
            second.destroyForcibly();
            fail("a second servercomm on " + endpoint + " did not exit");
        }
        List<String> err = Jvms.lines(second.getErrorStream().readAllBytes());
        assertEquals(1, second.exitValue(), String.join("\n", err));
        assertEquals(1, err.size(), String.join("\n", err));
        assertTrue(err.get(0).startsWith("servercomm: ") && err.get(0).contains(endpoint.substring(6)),
                String.join("\n", err));
    }

    @Test
    void sigtermStopsTheServerCleanlyWithOpenSessions() throws Exception {
        try (Communicator session = Communicators.connect(endpoint)) {
            SessionClient.open(session, SessionRequest.echo());
            server.destroy();
            assertTrue(server.waitFor(20, TimeUnit.SECONDS), "servercomm did not exit within 20 s of SIGTERM");
            assertEquals(0, server.exitValue(), Files.readString(dir.resolve("server.err")));
            int n;
            try {
                n = session.read(ByteBuffer.allocate(1));
            } catch (IOException e) {
                n = -1;
            }
            assertEquals(-1, n, "the open session should have ended with the server");
        }
    }

    private Jvms.Result client(String... args) throws Exception {
        return Jvms.client(dir, args);
    }
}
