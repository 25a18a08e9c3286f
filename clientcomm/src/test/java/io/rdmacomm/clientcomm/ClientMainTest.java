package io.rdmacomm.clientcomm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.Communicators;
import io.rdmacomm.session.Exchange;
import io.rdmacomm.session.ExchangeHandler;
import io.rdmacomm.session.SessionDispatcher;
import io.rdmacomm.session.SessionServer;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The client's subcommands in this JVM against servers on the test kit's in-process {@code local://}
 * transport: the real servercomm loop, and hand-made misbehaving servers for the failure paths.
 */
@Timeout(30)
class ClientMainTest {
    private final ExecutorService pool = Executors.newCachedThreadPool();
    private final StringWriter out = new StringWriter();
    private final StringWriter err = new StringWriter();
    private SessionServer server;
    private Communicator fakeServer;

    @AfterEach
    void tearDown() throws Exception {
        if (server != null) {
            server.stop();
            assertTrue(server.awaitStopped(Duration.ofSeconds(10)));
        }
        if (fakeServer != null) {
            fakeServer.close();
        }
        pool.shutdownNow();
        assertTrue(pool.awaitTermination(10, TimeUnit.SECONDS));
    }

    private String startServer() throws IOException {
        server = SessionServer.start(io.rdmacomm.api.Endpoint.parse("local://clientcomm-" + UUID.randomUUID()), 8,
                Duration.ofSeconds(5));
        pool.submit(() -> {
            server.run();
            return null;
        });
        return server.endpoint().toString();
    }

    /** A server whose only exchange is ECHO, served by {@code handler}, for one session. */
    private String startFakeEcho(ExchangeHandler handler) throws IOException {
        fakeServer = Communicators.serve("local://fake-" + UUID.randomUUID());
        SessionDispatcher dispatcher = SessionDispatcher.of(Map.of(Exchange.ECHO, handler), Duration.ZERO, null);
        pool.submit(() -> {
            dispatcher.serve(fakeServer.accept());
            return null;
        });
        return fakeServer.endpoint().toString();
    }

    private int run(String... args) {
        return ClientMain.execute(args, new PrintWriter(out, true), new PrintWriter(err, true));
    }

    private List<String> errLines() {
        return err.toString().lines().toList();
    }

    @Test
    void helloPrintsTheEchoedMessage() throws IOException {
        String endpoint = startServer();
        assertEquals(0, run("--endpoint", endpoint, "hello", "--message", "grüß dich"));
        assertEquals("grüß dich" + System.lineSeparator(), out.toString());
        assertEquals("", err.toString());
    }

    @Test
    void echoVerifiesEveryMessageAndSummarisesOnOneLine() throws IOException {
        String endpoint = startServer();
        assertEquals(0, run("--endpoint", endpoint, "echo", "--size", "100k", "--count", "7"));
        List<String> lines = out.toString().lines().toList();
        assertEquals(1, lines.size(), out.toString());
        assertTrue(lines.get(0).matches("echo: 7 messages of 102400 bytes, 716800 bytes each way in [0-9.]+ s,"
                + " [0-9.]+ MB/s, all verified"), lines.get(0));
        // messages smaller than the generation chunk, generated in a chunk of their own size on both sides
        out.getBuffer().setLength(0);
        assertEquals(0, run("--endpoint", endpoint, "echo", "--size", "8", "--count", "500"));
        assertTrue(out.toString().startsWith("echo: 500 messages of 8 bytes, 4000 bytes each way in "), out.toString());
    }

    @Test
    void corruptedEchoFailsWithOneLineNamingTheByte() throws IOException {
        String endpoint = startFakeEcho((peer, request) -> {
            ByteBuffer b = ByteBuffer.allocate(1000);
            while (peer.read(b.clear()) >= 0) {
                b.flip();
                b.put(0, (byte) (b.get(0) ^ 0x40));
                peer.write(b);
                peer.sync();
            }
        });
        assertEquals(1, run("--endpoint", endpoint, "echo", "--size", "10", "--count", "3"));
        assertEquals(1, errLines().size(), err.toString());
        assertTrue(errLines().get(0).startsWith("clientcomm: echo verification failed: message 1 of 3, byte 0"),
                err.toString());
        assertEquals("", out.toString());
    }

    @Test
    void peerDyingMidEchoFailsWithOneLine() throws IOException {
        String endpoint = startFakeEcho((peer, request) -> peer.readFully(ByteBuffer.allocate(100)));
        assertEquals(1, run("--endpoint", endpoint, "echo", "--size", "1m", "--count", "2"));
        assertEquals(1, errLines().size(), err.toString());
        assertTrue(errLines().get(0).startsWith("clientcomm: "), err.toString());
    }

    @Test
    void refusedSessionReportsTheServersReason() throws IOException {
        fakeServer = Communicators.serve("local://fake-" + UUID.randomUUID());
        SessionDispatcher sinkOnly = SessionDispatcher.of(Map.of(Exchange.SINK, (p, r) -> { }), Duration.ZERO,
                null);
        pool.submit(() -> {
            sinkOnly.serve(fakeServer.accept());
            return null;
        });
        assertEquals(1, run("--endpoint", fakeServer.endpoint().toString(), "hello"));
        assertEquals(List.of("clientcomm: server " + fakeServer.endpoint().authority() + " refused the ECHO session:"
                + " UNKNOWN_EXCHANGE: exchange ECHO is not served here; served: [SINK]"), errLines());
    }

    @Test
    void badEndpointIsAUsageErrorOnOneLine() {
        assertEquals(2, run("--endpoint", "tcp://127.0.0.1", "hello"));
        assertEquals(1, errLines().size(), err.toString());
        assertTrue(errLines().get(0).startsWith("clientcomm: ") && errLines().get(0).contains("missing port"),
                err.toString());
    }

    @Test
    void unknownSchemeNamesTheAvailableOnes() {
        assertEquals(1, run("--endpoint", "carrier-pigeon://loft:1", "hello"));
        assertEquals(1, errLines().size(), err.toString());
        assertTrue(errLines().get(0).contains("unknown scheme 'carrier-pigeon://'")
                && errLines().get(0).contains("local"), err.toString());
    }

    @Test
    void missingServerIsOneLineAndVerboseAddsTheStackTrace() {
        assertEquals(1, run("--endpoint", "local://nobody-" + UUID.randomUUID(), "hello"));
        assertEquals(1, errLines().size(), err.toString());
        assertTrue(errLines().get(0).startsWith("clientcomm: "), err.toString());

        err.getBuffer().setLength(0);
        assertEquals(1, run("--verbose", "--endpoint", "local://nobody-" + UUID.randomUUID(), "hello"));
        assertTrue(errLines().size() > 1 && errLines().get(1).contains("Exception"), err.toString());
    }

    @Test
    void nonsenseSizesAndCountsAreUsageErrors() {
        assertEquals(2, run("echo", "--size", "lots"));
        assertTrue(errLines().get(0).contains("bad size 'lots'"), err.toString());
        err.getBuffer().setLength(0);
        assertEquals(2, run("echo", "--count", "0"));
        assertEquals(List.of("clientcomm: --count must be at least 1, got 0 (see clientcomm --help)"), errLines());
    }

    @Test
    void noSubcommandIsAUsageError() {
        assertEquals(2, run());
        assertTrue(errLines().get(0).contains("missing subcommand"), err.toString());
    }
}
