package io.rdmacomm.clientcomm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmacomm.api.Access;
import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.Communicators;
import io.rdmacomm.api.Endpoint;
import io.rdmacomm.api.MemoryRegion;
import io.rdmacomm.session.Exchange;
import io.rdmacomm.session.ExchangeHandler;
import io.rdmacomm.session.ExchangeResult;
import io.rdmacomm.session.SessionDispatcher;
import io.rdmacomm.session.SessionServer;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
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
 * The exchange subcommands in this JVM: against the real servercomm loop on the test kit's {@code local://}
 * transport (remote memory included), and against hand-made servers that answer wrongly, to show that the
 * client's checks catch it.
 */
@Timeout(30)
class ExchangeCommandsTest {
    private final ExecutorService pool = Executors.newCachedThreadPool();
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
        server = SessionServer.start(Endpoint.parse("local://exchanges-" + UUID.randomUUID()), 16, Duration.ofSeconds(5));
        pool.submit(() -> {
            server.run();
            return null;
        });
        return server.endpoint().toString();
    }

    /** A server whose only exchange is {@code exchange}, served by {@code handler}, for one session. */
    private String startFake(Exchange exchange, ExchangeHandler handler) throws IOException {
        fakeServer = Communicators.serve("local://fake-" + UUID.randomUUID());
        SessionDispatcher dispatcher = SessionDispatcher.of(Map.of(exchange, handler), Duration.ZERO, null);
        pool.submit(() -> {
            dispatcher.serve(fakeServer.accept());
            return null;
        });
        return fakeServer.endpoint().toString();
    }

    private record Run(int code, String out, List<String> err) {
    }

    private static Run run(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = ClientMain.execute(args, new PrintWriter(out, true), new PrintWriter(err, true));
        return new Run(code, out.toString(), err.toString().lines().toList());
    }

    @Test
    void everyExchangeWorksOnLocalWithRemoteMemory() throws Exception {
        String endpoint = startServer();
        assertEquals(0, run("-e", endpoint, "send", "--message", "local").code());
        Run write = run("-e", endpoint, "write", "--size", "2500k");
        assertEquals(0, write.code(), write.toString());
        assertTrue(write.out().contains("in 3 chunks into the server's 1048576-byte region"), write.out());
        Run read = run("-e", endpoint, "read", "--offset", "7", "--length", "3");
        assertEquals("read: 3 bytes at offset 7 of the server's 1048576-byte region, pattern verified: e0 ff 1e"
                + System.lineSeparator(), read.out());
        assertEquals("DONE" + System.lineSeparator(), run("-e", endpoint, "call", "upper", "-i", "done").out());
    }

    /** {@code stats} prints the server's counters as NAME=VALUE on one line; the count of sessions includes itself. */
    @Test
    void statsPrintsTheServersCountersOnOneParseableLine() throws Exception {
        String endpoint = startServer();
        assertEquals(0, run("-e", endpoint, "hello").code());
        Run stats = run("-e", endpoint, "stats");
        assertEquals(0, stats.code(), stats.toString());
        List<String> lines = stats.out().lines().toList();
        assertEquals(1, lines.size(), stats.out());
        assertTrue(lines.get(0).matches("sessions=1 sessionsServed=2 maxSessions=16 regions=\\d+ regionBytes=\\d+"
                + "( regions\\.[a-z-]+=\\d+ regionBytes\\.[a-z-]+=\\d+)*"), lines.get(0));
        Run help = run("stats", "--help");
        assertEquals(0, help.code());
        assertTrue(help.out().contains("NAME=VALUE"), help.out());
    }

    @Test
    void groupOfTwoInThisJvm() throws Exception {
        String endpoint = startServer();
        List<Future<Run>> members = new ArrayList<>();
        for (String m : List.of("one", "two")) {
            members.add(pool.submit(() -> run("-e", endpoint, "alltoall", "-g", "g", "-k", "2", "-s", "4", "-m", m)));
        }
        for (Future<Run> f : members) {
            Run r = f.get(20, TimeUnit.SECONDS);
            assertEquals(0, r.code(), r.toString());
            assertTrue(r.out().contains("rank 0: serv" + System.lineSeparator()), r.out()); // "server", cut to 4 bytes
        }
    }

    @Test
    void aWrongAcknowledgementIsCaught() throws Exception {
        String endpoint = startFake(Exchange.SEND, (peer, request) -> {
            peer.readFully(ByteBuffer.allocate(request.sendLength()));
            ExchangeResult.ok(ByteBuffer.allocate(8).putInt(request.sendLength()).putInt(0x12345678).flip())
                    .send(peer);
            peer.read(ByteBuffer.allocate(1));
        });
        Run r = run("-e", endpoint, "send", "--message", "abc");
        assertEquals(1, r.code(), r.toString());
        assertTrue(r.err().get(0).contains("acknowledged 3 bytes with CRC32C 0x12345678, but 3 bytes with CRC32C"),
                r.toString());
    }

    @Test
    void aWrongPatternIsCaughtNamingTheByte() throws Exception {
        String endpoint = startFake(Exchange.READ, (peer, request) -> {
            ByteBuffer memory = ByteBuffer.allocateDirect(100);
            try (MemoryRegion region = peer.register(memory, EnumSet.of(Access.REMOTE_READ))) {
                ExchangeResult.ok(ByteBuffer.wrap(region.descriptor().toBytes())).send(peer);
                peer.readFully(ByteBuffer.allocate(4));
            }
            ExchangeResult.ok(ByteBuffer.allocate(0)).send(peer);
            peer.read(ByteBuffer.allocate(1));
        });
        Run r = run("-e", endpoint, "read", "--offset", "10", "--length", "5");
        assertEquals(1, r.code(), r.toString());
        assertEquals(List.of("clientcomm: read: byte 0 (offset 10) is 0x00, the pattern has 0x3d"), r.err());
    }

    @Test
    void usageErrorsExit2() throws Exception {
        assertEquals(2, run("alltoall", "-g", "g", "-k", "2", "-s", "4", "-m", "too long").code());
        assertEquals(2, run("alltoall", "-g", "bad/name", "-k", "2", "-m", "x").code());
        assertEquals(2, run("broadcast", "-g", "g", "-k", "0").code());
        assertEquals(2, run("call", "Bad Name!").code());
        assertEquals(2, run("call", "echo", "-i", "x", "-f", "y").code());
        assertEquals(2, run("read", "--length", "0").code());
        assertEquals(2, run("write", "--size", "0").code());
    }
}
