package io.rdmacomm.tcp;

import static io.rdmacomm.testkit.ReadinessContractTest.awaitAvailable;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmacomm.api.Access;
import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.Communicators;
import io.rdmacomm.api.MemoryRegion;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.zip.CRC32;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * {@code available()} and {@code notifyReadable} on tcp://, as a thread serving many connections uses them: arm,
 * get told, read what {@code available()} says (which never waits), arm again. On blocking channels (no liveness,
 * no read timeout, no busy polling), busy-polling and default (non-blocking, liveness on) ones, with and without TLS,
 * before and after the progress thread takes the socket over.
 */
@Timeout(120)
class TcpReadinessTest {
    private static final long WAIT_SECONDS = 20;

    /** Endpoint options of both sides, and whether TLS is on. */
    enum Mode {
        BLOCKING("liveness=0", false),
        BUSY_POLL("liveness=0&busyPoll=10us", false),
        DEFAULT("", false),
        TLS_BLOCKING("liveness=0", true),
        TLS_DEFAULT("", true);

        final String options;
        final boolean tls;

        Mode(String options, boolean tls) {
            this.options = options;
            this.tls = tls;
        }

        String serverUri() {
            return tls ? TestPki.get().serverUri(options)
                    : "tcp://127.0.0.1:0" + (options.isEmpty() ? "" : "?" + options);
        }

        String clientUri(int port) {
            return tls ? TestPki.get().clientUri(port, options)
                    : "tcp://127.0.0.1:" + port + (options.isEmpty() ? "" : "?" + options);
        }
    }

    private final ExecutorService helper = Executors.newCachedThreadPool();
    private final List<AutoCloseable> open = new ArrayList<>();

    @AfterEach
    void cleanUp() throws Exception {
        for (int i = open.size() - 1; i >= 0; i--) {
            open.get(i).close();
        }
        helper.shutdownNow();
        assertTrue(helper.awaitTermination(10, TimeUnit.SECONDS));
    }

    /** A connected pair: {@code served} (accepted, the side that is armed) and {@code client}. */
    private record Pair(Communicator served, Communicator client) {
    }

    private Pair pair(Mode mode) throws Exception {
        return pair(mode.serverUri(), mode::clientUri);
    }

    private Pair pair(String serverUri, java.util.function.IntFunction<String> clientUri) throws Exception {
        Communicator server = Communicators.serve(serverUri);
        open.add(server);
        Future<Communicator> accepted = helper.submit(server::accept);
        Communicator client = Communicators.connect(clientUri.apply(server.endpoint().port()));
        open.add(client);
        Communicator served = accepted.get(60, TimeUnit.SECONDS);
        open.add(served);
        return new Pair(served, client);
    }

    private static byte[] random(int n, long seed) {
        byte[] b = new byte[n];
        new Random(seed).nextBytes(b);
        return b;
    }

    private static void send(Communicator c, byte[] bytes) throws IOException {
        c.write(ByteBuffer.wrap(bytes));
        c.sync();
    }

    /** Arms {@code c} and waits until told; returns the thread the listener ran on. */
    private static Thread armAndAwait(Communicator c) throws InterruptedException {
        CountDownLatch told = new CountDownLatch(1);
        AtomicReference<Thread> on = new AtomicReference<>();
        assertTrue(c.notifyReadable(() -> {
            on.set(Thread.currentThread());
            told.countDown();
        }));
        assertTrue(told.await(WAIT_SECONDS, TimeUnit.SECONDS), "the listener ran");
        return on.get();
    }

    /**
     * Reads {@code count} bytes as an event loop does: arm, wait to be told, read exactly what {@code available()}
     * says (a read of that size returns it all at once), repeat. Returns them.
     */
    private static byte[] drain(Communicator c, int count) throws Exception {
        ByteBuffer got = ByteBuffer.allocate(count);
        while (got.hasRemaining()) {
            int n = awaitAvailable(c);
            assertTrue(n > 0, "no end of stream before " + count + " bytes; got " + got.position());
            int take = Math.min(n, got.remaining());
            got.limit(got.position() + take);
            assertEquals(take, c.read(got), "a read of what available() says returns it all");
            got.limit(got.capacity());
        }
        return got.array();
    }

    @ParameterizedTest
    @EnumSource(Mode.class)
    @Timeout(120)
    void aQuietConnectionHasNothingThenTheListenerRunsWhenBytesArrive(Mode mode) throws Exception {
        Pair p = pair(mode);
        assertEquals(0, p.served().available());
        CountDownLatch told = new CountDownLatch(1);
        assertTrue(p.served().notifyReadable(told::countDown));
        assertEquals(1, told.getCount(), "nothing arrived: the listener waits");
        byte[] sent = random(1000, 1);
        send(p.client(), sent);
        assertTrue(told.await(WAIT_SECONDS, TimeUnit.SECONDS));
        int n = p.served().available();
        assertTrue(n > 0 && n <= sent.length, "available " + n);
        ByteBuffer first = ByteBuffer.allocate(n);
        assertEquals(n, p.served().read(first));
        byte[] rest = drain(p.served(), sent.length - n);
        ByteBuffer all = ByteBuffer.allocate(sent.length).put(first.flip()).put(rest);
        assertArrayEquals(sent, all.array());
        assertEquals(0, p.served().available());

        // both ways: the client side too
        send(p.served(), sent);
        assertArrayEquals(sent, drain(p.client(), sent.length));
    }

    /**
     * A large write read as an event loop reads it (available, then read that much) comes in large pieces, not in
     * pieces of the small buffer a connection keeps between frames: 512 KiB in at most 128 rounds (4 KiB each on
     * average; in pieces of that buffer it would take 256 or more).
     */
    @ParameterizedTest
    @EnumSource(Mode.class)
    @Timeout(120)
    void theMiddleOfALargeWriteIsReadInLargePieces(Mode mode) throws Exception {
        Pair p = pair(mode);
        byte[] sent = random(512 * 1024, 7);
        Future<?> sending = helper.submit(() -> {
            send(p.client(), sent);
            return null;
        });
        ByteBuffer got = ByteBuffer.allocate(sent.length);
        int rounds = 0;
        while (got.hasRemaining()) {
            int n = awaitAvailable(p.served());
            assertTrue(n > 0, "no end of stream before " + sent.length + " bytes; got " + got.position());
            got.limit(got.position() + Math.min(n, got.remaining()));
            p.served().read(got);
            got.limit(got.capacity());
            rounds++;
        }
        sending.get(WAIT_SECONDS, TimeUnit.SECONDS);
        assertArrayEquals(sent, got.array());
        assertTrue(rounds <= 128, sent.length + " bytes took " + rounds + " rounds of available() and read()");
    }

    /**
     * tryWrite never waits, not even on a blocking channel whose writer is stuck on a peer that reads nothing: turning
     * the channel non-blocking would wait for that write, so tryWrite answers 0; once the writer is through (the peer
     * read), it takes bytes, and everything arrives in order.
     */
    @Test
    @Timeout(value = 120, threadMode = Timeout.ThreadMode.SEPARATE_THREAD) // a tryWrite that waits would never return
    void tryWriteDoesNotWaitForAWriterStuckOnABlockingChannel() throws Exception {
        Pair p = pair(Mode.BLOCKING);
        byte[] big = random(16 * 1024 * 1024, 8);
        Future<?> writing = helper.submit(() -> {
            send(p.client(), big); // more than the socket buffers hold: blocks until the peer reads
            return null;
        });
        // wait until the writer is stuck: the peer's socket holds bytes and the writer has not returned
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
        while (p.served().available() == 0 && System.nanoTime() < until) {
            Thread.onSpinWait();
        }
        assertTrue(!writing.isDone(), "the writer should be stuck on a peer that reads nothing");
        byte[] small = random(100, 9);
        ByteBuffer src = ByteBuffer.wrap(small);
        long start = System.nanoTime();
        int n = p.client().tryWrite(src);
        long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        assertTrue(tookMillis < 2000, "tryWrite waited " + tookMillis + " ms for a stuck writer");
        assertEquals(0, n, "a busy writer: tryWrite takes nothing");
        Future<byte[]> reading = helper.submit(() -> drain(p.served(), big.length + small.length));
        writing.get(WAIT_SECONDS, TimeUnit.SECONDS);
        while (src.hasRemaining()) {
            if (p.client().tryWrite(src) == 0) {
                Thread.onSpinWait();
            }
        }
        byte[] all = reading.get(WAIT_SECONDS, TimeUnit.SECONDS);
        assertArrayEquals(big, Arrays.copyOf(all, big.length));
        assertArrayEquals(small, Arrays.copyOfRange(all, big.length, all.length));
    }

    @ParameterizedTest
    @EnumSource(Mode.class)
    @Timeout(120)
    void armingWhenBytesAreThereRunsTheListenerOnTheCallerBeforeReturning(Mode mode) throws Exception {
        Pair p = pair(mode);
        send(p.client(), new byte[] {1, 2, 3});
        armAndAwait(p.served());
        Thread caller = Thread.currentThread();
        AtomicReference<Thread> on = new AtomicReference<>();
        assertTrue(p.served().notifyReadable(() -> on.set(Thread.currentThread())));
        assertSame(caller, on.get(), "ran on the caller, before notifyReadable returned");
        assertArrayEquals(new byte[] {1, 2, 3}, drain(p.served(), 3));
    }

    @ParameterizedTest
    @EnumSource(Mode.class)
    @Timeout(120)
    void theEndOfTheStreamTellsAnArmedListenerAndAvailableSaysMinusOne(Mode mode) throws Exception {
        Pair p = pair(mode);
        byte[] sent = random(5000, 2);
        send(p.client(), sent);
        assertArrayEquals(sent, drain(p.served(), sent.length));
        CountDownLatch told = new CountDownLatch(1);
        assertTrue(p.served().notifyReadable(told::countDown));
        p.client().close();
        assertTrue(told.await(WAIT_SECONDS, TimeUnit.SECONDS));
        assertEquals(-1, awaitAvailable(p.served()));
        assertEquals(-1, p.served().read(ByteBuffer.allocate(8)));
        assertEquals(-1, p.served().available());
        CountDownLatch again = new CountDownLatch(1);
        p.served().notifyReadable(again::countDown);
        assertEquals(0, again.getCount(), "at the end, arming runs the listener at once");
    }

    @ParameterizedTest
    @EnumSource(Mode.class)
    @Timeout(120)
    void aLocalCloseTellsAnArmedListenerAndAvailableThenThrows(Mode mode) throws Exception {
        Pair p = pair(mode);
        CountDownLatch told = new CountDownLatch(1);
        assertTrue(p.served().notifyReadable(told::countDown));
        p.served().close();
        assertTrue(told.await(WAIT_SECONDS, TimeUnit.SECONDS));
        assertThrows(ClosedChannelException.class, () -> p.served().available());
        CountDownLatch again = new CountDownLatch(1);
        p.served().notifyReadable(again::countDown);
        assertEquals(0, again.getCount(), "closed: arming runs the listener at once");
    }

    @Test
    @Timeout(60)
    void aHeartbeatAloneMakesNothingAvailableAndNoByteIsLost() throws Exception {
        Pair p = pair(Mode.DEFAULT.serverUri() + "?liveness=300ms",
                port -> "tcp://127.0.0.1:" + port + "?liveness=300ms");
        for (int i = 0; i < 3; i++) {
            armAndAwait(p.served()); // the client sends heartbeats every 100 ms, and nothing else
            assertEquals(0, p.served().available(), "a heartbeat is no stream byte");
        }
        byte[] sent = random(3000, 3);
        send(p.client(), sent);
        assertArrayEquals(sent, drain(p.served(), sent.length));
        armAndAwait(p.served());
        assertEquals(0, p.served().available());
    }

    @Test
    @Timeout(60)
    void aFrameHeaderInPiecesStaysBufferedUntilItIsWhole() throws Exception {
        try (Communicator server = Communicators.serve("tcp://127.0.0.1:0?liveness=0")) {
            Future<Communicator> accepted = helper.submit(server::accept);
            try (SocketChannel raw = Raw.connectAndHandshake(server.endpoint().port());
                    Communicator served = accepted.get(60, TimeUnit.SECONDS)) {
                byte[] payload = random(100, 4);
                ByteBuffer wire = ByteBuffer.allocate(Wire.HEADER_LENGTH * 2 + payload.length)
                        .put(Raw.frame(Wire.HEARTBEAT, new byte[0])).put(Raw.frame(Wire.DATA, payload)).flip();
                CountDownLatch arrived = new CountDownLatch(1);
                assertTrue(served.notifyReadable(arrived::countDown));
                // a heartbeat and three bytes of a DATA header
                Raw.writeAll(raw, wire.slice(0, Wire.HEADER_LENGTH + 3));
                assertTrue(arrived.await(WAIT_SECONDS, TimeUnit.SECONDS));
                assertEquals(0, served.available(), "a heartbeat and half a header are nothing to read");
                CountDownLatch told = new CountDownLatch(1);
                assertTrue(served.notifyReadable(told::countDown));
                assertEquals(1, told.getCount(), "the buffered half header does not run the listener");
                Raw.writeAll(raw, wire.slice(Wire.HEADER_LENGTH + 3, wire.limit() - Wire.HEADER_LENGTH - 3));
                assertTrue(told.await(WAIT_SECONDS, TimeUnit.SECONDS));
                assertArrayEquals(payload, drain(served, payload.length));
            }
        }
    }

    @ParameterizedTest
    @EnumSource(value = Mode.class, names = {"BLOCKING", "BUSY_POLL", "DEFAULT", "TLS_DEFAULT"})
    @Timeout(120)
    void aLargeWriteReadIncrementallyArrivesWholeAndInOrder(Mode mode) throws Exception {
        Pair p = pair(mode);
        byte[] sent = random(1 << 20, 5);
        Future<?> writer = helper.submit(() -> {
            send(p.client(), sent);
            return null;
        });
        ByteBuffer got = ByteBuffer.allocate(sent.length);
        while (got.hasRemaining()) {
            int n = p.served().available();
            if (n == 0) {
                armAndAwait(p.served());
                continue;
            }
            assertTrue(n > 0);
            got.limit(got.position() + Math.min(Math.min(n, 10_000), got.remaining()));
            assertEquals(got.remaining(), p.served().read(got));
            got.limit(got.capacity());
        }
        writer.get(WAIT_SECONDS, TimeUnit.SECONDS);
        CRC32 want = new CRC32();
        want.update(sent);
        CRC32 have = new CRC32();
        have.update(got.array());
        assertEquals(want.getValue(), have.getValue());
    }

    @ParameterizedTest
    @EnumSource(value = Mode.class, names = {"BLOCKING", "DEFAULT", "TLS_DEFAULT"})
    @Timeout(120)
    void afterAOneSidedOperationTheProgressThreadsPipeAnswersAndTells(Mode mode) throws Exception {
        Pair p = pair(mode);
        byte[] before = random(700, 6);
        send(p.client(), before);
        armAndAwait(p.served()); // bytes buffered on the socket side when the socket is handed over
        MemoryRegion region = p.served().register(ByteBuffer.allocateDirect(64), Access.readWrite());
        p.client().put(ByteBuffer.wrap(new byte[] {7, 7, 7}), region.descriptor(), 0); // the client hands over too
        assertEquals(7, region.buffer().get(2));
        assertArrayEquals(before, drain(p.served(), before.length));
        assertEquals(0, p.served().available());

        byte[] after = random(300_000, 7); // more than the pipe holds
        Future<?> writer = helper.submit(() -> {
            send(p.client(), after);
            return null;
        });
        assertArrayEquals(after, drain(p.served(), after.length));
        writer.get(WAIT_SECONDS, TimeUnit.SECONDS);
        send(p.served(), before);
        assertArrayEquals(before, drain(p.client(), before.length));

        CountDownLatch told = new CountDownLatch(1);
        assertTrue(p.served().notifyReadable(told::countDown));
        assertEquals(1, told.getCount());
        p.client().close();
        assertTrue(told.await(WAIT_SECONDS, TimeUnit.SECONDS));
        assertEquals(-1, awaitAvailable(p.served()));

        CountDownLatch closed = new CountDownLatch(1);
        Pair q = pair(mode);
        q.served().register(ByteBuffer.allocateDirect(64), Access.readWrite());
        assertTrue(q.served().notifyReadable(closed::countDown));
        q.served().close();
        assertTrue(closed.await(WAIT_SECONDS, TimeUnit.SECONDS), "a local close tells the listener");
        assertThrows(ClosedChannelException.class, () -> q.served().available());
    }

    @Test
    @Timeout(120)
    void oneThreadServesTwoHundredArmedConnections() throws Exception {
        int connections = 200;
        int threadsBefore = Thread.activeCount();
        try (Communicator server = Communicators.serve("tcp://127.0.0.1:0")) {
            List<Communicator> clients = new ArrayList<>();
            Thread connector = new Thread(() -> {
                try {
                    for (int i = 0; i < connections; i++) {
                        clients.add(Communicators.connect("tcp://127.0.0.1:" + server.endpoint().port()));
                    }
                } catch (IOException e) {
                    throw new IllegalStateException(e);
                }
            });
            connector.start();
            Communicator[] served = new Communicator[connections];
            try {
                for (int i = 0; i < connections; i++) {
                    served[i] = server.accept();
                }
                connector.join(TimeUnit.SECONDS.toMillis(60));
                assertEquals(connections, clients.size());

                BlockingQueue<Integer> ready = new LinkedBlockingQueue<>();
                Runnable[] listeners = new Runnable[connections];
                for (int i = 0; i < connections; i++) {
                    int index = i;
                    listeners[i] = () -> ready.add(index);
                    assertTrue(served[i].notifyReadable(listeners[i]));
                }
                assertTrue(ready.isEmpty(), "nothing arrived yet");
                // clients.get(i) need not be served[i]: each client sends its own number first
                byte[][] sent = new byte[connections][];
                for (int i = 0; i < connections; i++) {
                    sent[i] = random(2 + 1000 + i * 37, 100 + i);
                    sent[i][0] = (byte) (i >> 8);
                    sent[i][1] = (byte) i;
                    send(clients.get(i), sent[i]);
                }
                ByteBuffer[] got = new ByteBuffer[connections];
                for (int i = 0; i < connections; i++) {
                    got[i] = ByteBuffer.allocate(2 + 1000 + (connections - 1) * 37);
                }
                int[] expected = new int[connections];
                java.util.Arrays.fill(expected, -1);
                int done = 0;
                while (done < connections) {
                    Integer at = ready.poll(WAIT_SECONDS, TimeUnit.SECONDS);
                    assertTrue(at != null, "told of every connection; done " + done);
                    Communicator c = served[at];
                    ByteBuffer g = got[at];
                    int n = c.available();
                    if (n > 0) {
                        int limit = expected[at] < 0 ? g.capacity() : expected[at];
                        g.limit(Math.min(limit, g.position() + n));
                        assertEquals(g.remaining(), c.read(g));
                        if (expected[at] < 0 && g.position() >= 2) {
                            int from = ((g.get(0) & 0xff) << 8) | (g.get(1) & 0xff);
                            expected[at] = sent[from].length;
                        }
                    }
                    if (expected[at] >= 0 && g.position() == expected[at]) {
                        done++;
                    } else {
                        assertTrue(c.notifyReadable(listeners[at]));
                    }
                }
                for (int i = 0; i < connections; i++) {
                    int from = ((got[i].get(0) & 0xff) << 8) | (got[i].get(1) & 0xff);
                    assertArrayEquals(sent[from], java.util.Arrays.copyOf(got[i].array(), got[i].position()));
                }
                int threadsAfter = Thread.activeCount();
                assertTrue(threadsAfter <= threadsBefore + 3,
                        "threads before " + threadsBefore + ", after " + threadsAfter);
            } finally {
                for (Communicator c : served) {
                    if (c != null) {
                        c.close();
                    }
                }
                for (Communicator c : clients) {
                    c.close();
                }
            }
        }
    }

    @Test
    @Timeout(60)
    void closedArmedConnectionsLeaveNoDescriptorBehind() throws Exception {
        warmUp();
        long before = descriptors();
        String named = fdNames();
        for (int round = 0; round < 3; round++) {
            Pair p = pair(round == 0 ? Mode.BLOCKING : Mode.DEFAULT);
            CountDownLatch told = new CountDownLatch(1);
            assertTrue(p.served().notifyReadable(told::countDown));
            assertTrue(p.client().notifyReadable(() -> { }));
            for (int i = open.size() - 1; i >= 0; i--) {
                open.get(i).close();
            }
            open.clear();
            assertTrue(told.await(WAIT_SECONDS, TimeUnit.SECONDS));
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
        long now;
        while ((now = descriptors()) > before && System.nanoTime() - deadline < 0) {
            Thread.onSpinWait(); // the readiness thread lets go of closed channels' keys on its next wakeup
        }
        assertTrue(now <= before, "descriptors before " + before + ", after " + now + ": " + named + " -> "
                + fdNames());
        while (readinessThreadRuns() && System.nanoTime() - deadline < 0) {
            Thread.onSpinWait();
        }
        assertTrue(!readinessThreadRuns(), "with no connection left the readiness thread ends");
    }

    /** Starts the process's lazy parts once (classes, the liveness thread), so they do not count as a leak. */
    private void warmUp() throws Exception {
        for (Mode mode : List.of(Mode.BLOCKING, Mode.DEFAULT)) {
            Pair p = pair(mode);
            assertTrue(p.served().notifyReadable(() -> { }));
            assertTrue(p.client().notifyReadable(() -> { }));
            for (int i = open.size() - 1; i >= 0; i--) {
                open.get(i).close();
            }
            open.clear();
        }
    }

    private static boolean readinessThreadRuns() {
        return Thread.getAllStackTraces().keySet().stream()
                .anyMatch(t -> t.getName().equals("rdmacomm-tcp-readiness") && t.isAlive());
    }

    private static String fdNames() throws IOException {
        try (var s = Files.list(Path.of("/proc/self/fd"))) {
            return s.map(f -> {
                try {
                    return Files.readSymbolicLink(f).toString();
                } catch (IOException e) {
                    return "?";
                }
            }).sorted().toList().toString();
        }
    }

    private static long descriptors() throws IOException {
        try (var s = Files.list(Path.of("/proc/self/fd"))) {
            return s.count();
        }
    }
}
