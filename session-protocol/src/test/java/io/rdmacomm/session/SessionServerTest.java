package io.rdmacomm.session;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.Communicators;
import io.rdmacomm.api.Endpoint;
import io.rdmacomm.session.SessionClient;
import io.rdmacomm.session.SessionException;
import io.rdmacomm.session.SessionProtocol;
import io.rdmacomm.session.SessionReply;
import io.rdmacomm.session.SessionRequest;
import io.rdmacomm.session.SessionStatus;
import java.io.IOException;
import java.lang.ref.WeakReference;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The server loop over the real in-process {@code local://} transport of the test kit. */
@Timeout(30)
class SessionServerTest {
    private final ExecutorService pool = Executors.newCachedThreadPool();
    private SessionServer server;
    private Future<?> running;

    private void start(int maxSessions, Duration requestTimeout) throws IOException {
        server = SessionServer.start(Endpoint.parse("local://servercomm-" + UUID.randomUUID()), maxSessions,
                requestTimeout);
        running = pool.submit(() -> {
            server.run();
            return null;
        });
    }

    @AfterEach
    void stop() throws Exception {
        if (server != null) {
            server.stop();
            running.get(10, TimeUnit.SECONDS);
            assertTrue(server.awaitStopped(Duration.ofSeconds(1)));
            List<String> left = Thread.getAllStackTraces().keySet().stream().map(Thread::getName)
                    .filter(n -> n.startsWith("servercomm-")).toList();
            assertEquals(List.of(), left, "threads outlive the server");
        }
        pool.shutdownNow();
    }

    private Communicator session(SessionRequest request) throws IOException {
        Communicator c = Communicators.connect(server.endpoint().toString());
        try {
            SessionClient.open(c, request);
            return c;
        } catch (IOException e) {
            c.close();
            throw e;
        }
    }

    @Test
    void echoesEveryByte() throws Exception {
        start(4, Duration.ofSeconds(5));
        byte[] data = new byte[300_000];
        new Random(1).nextBytes(data);
        try (Communicator c = session(SessionRequest.echo())) {
            Future<?> writer = pool.submit(() -> {
                c.write(ByteBuffer.wrap(data));
                c.sync();
                return null;
            });
            ByteBuffer back = ByteBuffer.allocate(data.length);
            c.readFully(back);
            writer.get(10, TimeUnit.SECONDS);
            assertArrayEquals(data, back.array());
        }
    }

    @Test
    void sinkAcknowledgesTheTotal() throws Exception {
        start(4, Duration.ofSeconds(5));
        long total = 3 * 1024 * 1024 + 17;
        try (Communicator c = session(SessionRequest.sink(total))) {
            ByteBuffer chunk = ByteBuffer.allocate(64 * 1024);
            for (long sent = 0; sent < total; ) {
                chunk.clear().limit((int) Math.min(chunk.capacity(), total - sent));
                sent += chunk.remaining();
                c.write(chunk);
            }
            c.sync();
            assertEquals(total, SessionProtocol.readSinkAck(c));
        }
    }

    @Test
    void badRequestIsAnsweredAndTheServerGoesOnServing() throws Exception {
        start(4, Duration.ofSeconds(5));
        try (Communicator bad = Communicators.connect(server.endpoint().toString())) {
            bad.write(ByteBuffer.wrap("not a session request".getBytes(StandardCharsets.US_ASCII)));
            try {
                bad.sync();
            } catch (IOException e) {
                // the server may have refused and closed already; its reply is still there to read
            }
            SessionReply reply = SessionReply.read(bad);
            assertEquals(SessionStatus.BAD_MAGIC, reply.status());
            assertEquals(-1, bad.read(ByteBuffer.allocate(1)));
        }
        assertEchoWorks();
    }

    @Test
    void silentClientIsCutOffAfterTheRequestTimeout() throws Exception {
        start(4, Duration.ofMillis(200));
        try (Communicator silent = Communicators.connect(server.endpoint().toString())) {
            SessionReply reply = SessionReply.read(silent);
            assertEquals(SessionStatus.TRUNCATED, reply.status());
        }
        assertEchoWorks();
    }

    @Test
    void clientsBeyondTheLimitAreToldTheServerIsBusy() throws Exception {
        start(1, Duration.ofSeconds(5));
        try (Communicator first = session(SessionRequest.echo())) {
            SessionException e = assertThrows(SessionException.class, () -> session(SessionRequest.echo()));
            assertEquals(SessionStatus.BUSY, e.status());
            assertTrue(e.getMessage().contains("limit of 1"), e.getMessage());
            echo(first, "still served");
        }
        // the permit comes back when the first session's thread has finished: poll with a deadline
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (true) {
            try (Communicator next = session(SessionRequest.echo())) {
                echo(next, "after busy");
                break;
            } catch (SessionException e) {
                if (e.status() != SessionStatus.BUSY || System.nanoTime() > deadline) {
                    throw e;
                }
                Thread.onSpinWait();
            }
        }
    }

    @Test
    void servesManyClientsAtOnce() throws Exception {
        start(64, Duration.ofSeconds(5));
        List<Future<?>> clients = new ArrayList<>();
        for (int i = 0; i < 32; i++) {
            int id = i;
            clients.add(pool.submit(() -> {
                try (Communicator c = session(SessionRequest.echo())) {
                    for (int round = 0; round < 20; round++) {
                        echo(c, "client " + id + " round " + round);
                    }
                }
                return null;
            }));
        }
        for (Future<?> f : clients) {
            f.get(20, TimeUnit.SECONDS);
        }
    }

    @Test
    void stopEndsOpenSessions() throws Exception {
        start(4, Duration.ofSeconds(5));
        try (Communicator c = session(SessionRequest.echo())) {
            echo(c, "before stop");
            server.stop();
            running.get(10, TimeUnit.SECONDS);
            assertTrue(server.awaitStopped(Duration.ofSeconds(1)));
            int n;
            try {
                n = c.read(ByteBuffer.allocate(1));
            } catch (IOException e) {
                n = -1;
            }
            assertEquals(-1, n, "the session should have ended with the server");
        }
    }

    @Test
    void aSessionsRequestWatchdogLeavesTheTimerOnceTheRequestCame() throws Exception {
        start(4, Duration.ofMinutes(10));
        int sessions = 50;
        for (int i = 0; i < sessions; i++) {
            try (Communicator c = session(SessionRequest.echo())) {
                echo(c, "session " + i);
            }
        }
        // the watchdog is cancelled before the reply goes out; at most 4 sessions (the limit) are still ending, each
        // with at most its idle check
        int waiting = server.timerTasks();
        assertTrue(waiting <= 4, waiting + " timer tasks wait after " + sessions + " sessions that sent their"
                + " request at once: cancelled watchdogs and idle checks stay queued, holding their connections");
    }

    @Test
    void anEndedSessionsConnectionCanBeCollected() throws Exception {
        // more sessions than run on platform threads at once (SessionThreads), so that on JDK 24+ some are virtual
        int n = SessionThreads.DEFAULT_PLATFORM + 8;
        start(n, Duration.ofSeconds(5));
        List<Communicator> clients = new ArrayList<>();
        List<WeakReference<Communicator>> served = new ArrayList<>();
        try {
            for (int i = 0; i < n; i++) {
                clients.add(session(SessionRequest.echo()));
            }
            for (Communicator c : clients) {
                echo(c, "held");
            }
            for (Communicator peer : server.sessionPeers()) {
                served.add(new WeakReference<>(peer));
            }
        } finally {
            for (Communicator c : clients) {
                c.close();
            }
        }
        assertEquals(n, served.size());
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        long left = n;
        while (System.nanoTime() < deadline) {
            System.gc();
            left = served.stream().filter(w -> w.get() != null).count();
            if (left == 0) {
                return;
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
        }
        // ended session threads are kept until the server's next sweep (ServerThreads); they must not keep their
        // connections with them
        assertEquals(0, left, left + " of " + n + " ended sessions' connections are still reachable after 20 s"
                + " (live sessions: " + server.liveSessions() + ")");
    }

    private void assertEchoWorks() throws IOException {
        try (Communicator c = session(SessionRequest.echo())) {
            echo(c, "next client");
        }
    }

    private static void echo(Communicator c, String text) throws IOException {
        byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
        c.write(ByteBuffer.wrap(bytes));
        c.sync();
        ByteBuffer back = ByteBuffer.allocate(bytes.length);
        c.readFully(back);
        assertEquals(text, new String(back.array(), StandardCharsets.UTF_8));
    }

    /** STATS sessions this test opened so far. */
    private int statsSessions;

    private ServerStats stats() throws IOException {
        statsSessions++;
        try (Communicator c = session(SessionRequest.stats())) {
            return ServerStats.read(c);
        }
    }

    /**
     * STATS until it reports {@code sessions} live sessions, within 10 s: the server ends an earlier STATS session
     * on its own thread after the client closed it, so that one may still count for a moment.
     */
    private ServerStats statsOnceSessionsAre(long sessions) throws IOException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        ServerStats s = stats();
        while (value(s, "sessions") != sessions && System.nanoTime() < deadline) {
            java.util.concurrent.locks.LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20)); // polling
            s = stats();
        }
        return s;
    }

    private static long value(ServerStats stats, String name) {
        return stats.get(name).orElseThrow(() -> new AssertionError(name + " missing from " + stats));
    }

    /**
     * STATS counts the live sessions (itself included) and the registered memory of the process: a READ session's
     * region while it lives, and none once its client vanished without saying done.
     */
    @Test
    void statsReportLiveSessionsAndRegisteredMemoryUntilAPeerThatLeftIsReleased() throws Exception {
        start(4, Duration.ofSeconds(5));
        ServerStats baseline = stats();
        assertEquals(1, value(baseline, "sessions"), "the STATS session counts itself: " + baseline);
        assertEquals(1, value(baseline, "sessionsServed"));
        assertEquals(4, value(baseline, "maxSessions"));

        Communicator reader = session(SessionRequest.oneSidedRead());
        ExchangeResult advert = ExchangeResult.expectOk(reader, "read");
        long regionBytes = io.rdmacomm.api.RegionDescriptor.readFrom(advert.body()).length();
        ServerStats during = statsOnceSessionsAre(2);
        assertEquals(2, value(during, "sessions"), "the READ session and this STATS one: " + during);
        assertEquals(statsSessions + 1, value(during, "sessionsServed"), "every STATS session and the READ one");
        assertEquals(value(baseline, "regions") + 1, value(during, "regions"), during.toString());
        assertEquals(value(baseline, "regionBytes") + regionBytes, value(during, "regionBytes"), during.toString());
        assertEquals(value(baseline, "regions.local") + 1, value(during, "regions.local"), during.toString());

        reader.close(); // the client goes without READ done
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        ServerStats after = stats();
        while ((value(after, "sessions") != 1 || value(after, "regions") != value(baseline, "regions"))
                && System.nanoTime() < deadline) {
            java.util.concurrent.locks.LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20)); // polling
            after = stats();
        }
        assertEquals(1, value(after, "sessions"), after.toString());
        assertEquals(value(baseline, "regions"), value(after, "regions"), after.toString());
        assertEquals(value(baseline, "regionBytes"), value(after, "regionBytes"), after.toString());
    }
}
