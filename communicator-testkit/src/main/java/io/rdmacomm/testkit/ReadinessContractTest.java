package io.rdmacomm.testkit;

import static io.rdmacomm.testkit.Harness.random;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmacomm.api.Communicator;
import io.rdmacomm.testkit.Harness.Pair;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * What a thread serving many connections relies on ({@link Communicator#available()},
 * {@link Communicator#notifyReadable}, {@link Communicator#busyPoll}, {@link Communicator#blockingPoll}), run against one transport with a one-line
 * subclass, as {@link CommunicatorContractTest}. A transport that cannot tell what is readable must say so
 * (notifyReadable false, available 0): the tests then check that, and the transports this project ships all tell.
 */
public abstract class ReadinessContractTest {
    private static final long WAIT_SECONDS = 10;

    private final TransportUnderTest transport;
    private Harness h;

    protected ReadinessContractTest(TransportUnderTest transport) {
        this.transport = Objects.requireNonNull(transport, "transport");
    }

    /** Whether the transport under test is expected to tell what is readable. */
    protected boolean tells() {
        return true;
    }

    @BeforeEach
    void openHarness() {
        h = new Harness(transport);
        h.assumeAvailable();
    }

    @AfterEach
    void closeEverything() throws Exception {
        h.close();
    }

    @Test
    @Timeout(60)
    void theListenerRunsOnceBytesArriveAndReadsOfWhatIsAvailableDoNotWait() throws Exception {
        Pair p = h.pair();
        Communicator reader = p.accepted();
        assertEquals(0, reader.available(), "nothing was written yet");
        CountDownLatch told = new CountDownLatch(1);
        boolean tells = reader.notifyReadable(told::countDown);
        assertEquals(tells(), tells, "notifyReadable on " + transport.scheme() + "://");
        if (!tells) {
            return;
        }
        assertEquals(1, told.getCount(), "told before anything arrived");
        byte[] sent = random(7, 300_000);
        Thread writer = new Thread(() -> {
            try {
                for (int at = 0; at < sent.length; at += 7_000) {
                    p.client().write(ByteBuffer.wrap(sent, at, Math.min(7_000, sent.length - at)));
                    p.client().sync();
                }
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        }, "readiness-writer");
        writer.start();
        assertTrue(told.await(WAIT_SECONDS, TimeUnit.SECONDS), "the listener ran after the peer wrote");
        byte[] got = readAsALoopDoes(reader, sent.length);
        writer.join(TimeUnit.SECONDS.toMillis(WAIT_SECONDS));
        assertArrayEquals(sent, got, "every byte, in order, read only as available() allowed");
        assertEquals(0, reader.available(), "nothing left");
    }

    /**
     * A listener armed right after reads that waited for their bytes (which a busy-polling transport polls for, and
     * may tell its peer so) still runs when the peer writes next: the reads' polling must not outlive them unseen.
     */
    @Test
    @Timeout(60)
    void aListenerArmedAfterReadsThatWaitedRunsOnThePeersNextBytes() throws Exception {
        Pair p = h.pair();
        Communicator client = p.client();
        Communicator server = p.accepted();
        int exchanges = 200;
        CompletableFuture<Void> echo = CompletableFuture.runAsync(() -> {
            ByteBuffer b = ByteBuffer.allocate(8);
            try {
                for (int i = 0; i <= exchanges; i++) {
                    server.readFully(b.clear());
                    server.write(b.flip());
                    server.sync();
                }
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        });
        ByteBuffer b = ByteBuffer.allocate(8);
        for (long i = 0; i < exchanges; i++) {
            client.write(b.clear().putLong(0, i));
            client.sync();
            client.readFully(b.clear());
            assertEquals(i, b.getLong(0), "echo " + i);
        }
        CountDownLatch told = new CountDownLatch(1);
        if (client.notifyReadable(told::countDown)) {
            assertEquals(1, told.getCount(), "told before the peer wrote again");
            client.write(b.clear().putLong(0, exchanges));
            client.sync();
            assertTrue(told.await(WAIT_SECONDS, TimeUnit.SECONDS), "the listener ran when the echo came");
            assertTrue(client.available() > 0, "the echo is available");
        } else {
            client.write(b.clear().putLong(0, exchanges));
            client.sync();
        }
        client.readFully(b.clear());
        assertEquals(exchanges, b.getLong(0), "the last echo");
        echo.get(WAIT_SECONDS, TimeUnit.SECONDS);
    }

    @Test
    @Timeout(60)
    void aListenerArmedWhileBytesWaitRunsAtOnceOnTheCallingThread() throws Exception {
        Pair p = h.pair();
        p.client().write(ByteBuffer.wrap(new byte[] {1, 2, 3}));
        p.client().sync();
        Communicator reader = p.accepted();
        if (!tells()) {
            assertEquals(0, reader.available());
            return;
        }
        awaitAvailable(reader);
        Thread caller = Thread.currentThread();
        List<Thread> ranOn = new ArrayList<>();
        assertTrue(reader.notifyReadable(() -> ranOn.add(Thread.currentThread())));
        assertEquals(List.of(caller), ranOn, "ran before notifyReadable returned, on its caller");
        ByteBuffer b = ByteBuffer.allocate(3);
        while (b.hasRemaining()) {
            reader.read(b);
        }
        assertArrayEquals(new byte[] {1, 2, 3}, b.array());
    }

    @Test
    @Timeout(60)
    void theEndOfThePeersStreamIsAvailableAsMinusOne() throws Exception {
        Pair p = h.pair();
        byte[] sent = random(8, 5_000);
        p.client().write(ByteBuffer.wrap(sent));
        p.client().sync();
        p.client().close();
        Communicator reader = p.accepted();
        if (!tells()) {
            return;
        }
        assertArrayEquals(sent, readAsALoopDoes(reader, sent.length));
        assertEquals(-1, awaitAvailable(reader), "after the last byte: the end");
        assertEquals(-1, reader.read(ByteBuffer.allocate(1)), "and a read says so too");
    }

    @Test
    @Timeout(60)
    void closingAConnectionRunsItsListener() throws Exception {
        Pair p = h.pair();
        Communicator reader = p.accepted();
        CountDownLatch told = new CountDownLatch(1);
        if (!reader.notifyReadable(told::countDown)) {
            return;
        }
        reader.close();
        assertTrue(told.await(WAIT_SECONDS, TimeUnit.SECONDS), "an armed listener runs when its connection closes");
        assertThrows(ClosedChannelException.class, reader::available);
    }

    @Test
    @Timeout(90)
    void oneThreadServesManyConnections() throws Exception {
        if (!tells()) {
            return;
        }
        int connections = 24;
        int rounds = 20;
        Communicator server = h.serve();
        List<Pair> pairs = new ArrayList<>();
        for (int i = 0; i < connections; i++) {
            pairs.add(h.pair(server));
        }
        // the loop: echo every 100-byte message back, reading only what is available, on this one thread
        BlockingQueue<Integer> ready = new ArrayBlockingQueue<>(connections);
        ByteBuffer[] partial = new ByteBuffer[connections];
        AtomicInteger echoed = new AtomicInteger();
        Thread loop = new Thread(() -> {
            try {
                for (int i = 0; i < connections; i++) {
                    partial[i] = ByteBuffer.allocate(100);
                    int id = i;
                    if (!pairs.get(i).accepted().notifyReadable(() -> ready.add(id))) {
                        throw new IllegalStateException("connection " + i + " cannot tell what is readable");
                    }
                }
                while (echoed.get() < connections * rounds) {
                    Integer id = ready.poll(WAIT_SECONDS, TimeUnit.SECONDS);
                    if (id == null) {
                        throw new IllegalStateException("no connection was ready for " + WAIT_SECONDS + " s");
                    }
                    Communicator c = pairs.get(id).accepted();
                    for (int n = c.available(); n > 0; n = c.available()) {
                        ByteBuffer b = partial[id];
                        b.limit(Math.min(b.capacity(), b.position() + n));
                        c.read(b);
                        b.limit(b.capacity());
                        if (!b.hasRemaining()) {
                            c.write(b.flip());
                            c.sync();
                            b.clear();
                            echoed.incrementAndGet();
                        }
                    }
                    c.notifyReadable(() -> ready.add(id));
                }
            } catch (IOException | InterruptedException | RuntimeException e) {
                throw new IllegalStateException(e);
            }
        }, "readiness-loop");
        loop.setDaemon(true);
        loop.start();
        for (int r = 0; r < rounds; r++) {
            for (int i = 0; i < connections; i++) {
                byte[] m = random(1000 * r + i, 100);
                pairs.get(i).client().write(ByteBuffer.wrap(m));
                pairs.get(i).client().sync();
            }
            for (int i = 0; i < connections; i++) {
                ByteBuffer back = ByteBuffer.allocate(100);
                pairs.get(i).client().readFully(back);
                assertArrayEquals(random(1000 * r + i, 100), back.array(), "round " + r + ", connection " + i);
            }
        }
        loop.join(TimeUnit.SECONDS.toMillis(WAIT_SECONDS));
        assertEquals(connections * rounds, echoed.get());
    }

    @Test
    @Timeout(60)
    void busyPollReturnsOnceItsConditionHolds() throws Exception {
        Pair p = h.pair();
        Communicator reader = p.accepted();
        CountDownLatch told = new CountDownLatch(1);
        if (!reader.notifyReadable(told::countDown)) {
            return;
        }
        p.client().write(ByteBuffer.wrap(new byte[] {9}));
        p.client().sync();
        long start = System.nanoTime();
        boolean held = reader.busyPoll(Duration.ofSeconds(WAIT_SECONDS).toNanos(), () -> told.getCount() == 0);
        if (held) {
            assertEquals(0, told.getCount(), "it returned true only once the condition held");
        } else {
            // a transport without progress to drive returns at once and its own thread tells
            assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(WAIT_SECONDS / 2),
                    "false is returned at once, not after spinning");
            assertTrue(told.await(WAIT_SECONDS, TimeUnit.SECONDS));
        }
        assertEquals(1, awaitAvailable(reader));
    }

    /**
     * A thread that sleeps in {@link Communicator#blockingPoll} takes the peer's bytes in itself: the listener runs on
     * it (in at least three rounds of four), and it returns once its condition holds. Where the transport cannot wait
     * so, it returns false at once.
     */
    @Test
    @Timeout(60)
    void blockingPollTakesArrivalsOnTheWaitingThread() throws Exception {
        Pair p = h.pair();
        Communicator reader = p.accepted();
        if (!reader.canBlockingPoll()) {
            long start = System.nanoTime();
            assertFalse(reader.blockingPoll(TimeUnit.SECONDS.toNanos(WAIT_SECONDS), () -> false));
            assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(WAIT_SECONDS / 2),
                    "false is returned at once, not after waiting");
            return;
        }
        int rounds = 20;
        int onTheWaiter = 0;
        for (int round = 0; round < rounds; round++) {
            List<Thread> ranOn = new ArrayList<>();
            CountDownLatch waiting = new CountDownLatch(1);
            assertTrue(reader.notifyReadable(() -> {
                synchronized (ranOn) {
                    ranOn.add(Thread.currentThread());
                }
            }));
            byte[] m = random(round, 50);
            // the peer writes once the reader is inside the wait (its condition was looked at)
            CompletableFuture<Void> writer = CompletableFuture.runAsync(() -> {
                try {
                    assertTrue(waiting.await(WAIT_SECONDS, TimeUnit.SECONDS));
                    p.client().write(ByteBuffer.wrap(m));
                    p.client().sync();
                } catch (IOException | InterruptedException e) {
                    throw new IllegalStateException(e);
                }
            });
            boolean held = reader.blockingPoll(TimeUnit.SECONDS.toNanos(WAIT_SECONDS), () -> {
                waiting.countDown();
                synchronized (ranOn) {
                    return !ranOn.isEmpty();
                }
            });
            assertTrue(held, "round " + round + ": the wait ended when the bytes came, not on its timeout");
            synchronized (ranOn) {
                assertEquals(1, ranOn.size(), "round " + round + ": the listener ran once");
                if (ranOn.get(0) == Thread.currentThread()) {
                    onTheWaiter++;
                }
            }
            writer.get(WAIT_SECONDS, TimeUnit.SECONDS);
            assertArrayEquals(m, readAsALoopDoes(reader, m.length), "round " + round);
        }
        // a transport thread busy with the previous round when the wait began may take an arrival in now and then
        // (a descheduled progress thread on a loaded machine); taking them in on the waiter is the rule
        assertTrue(onTheWaiter >= rounds * 3 / 4, "the listener ran on the thread that waited in " + onTheWaiter
                + " of " + rounds + " rounds");
    }

    /** wakeBlockingPoll ends a wait at once, a wait with nothing to wake it ends on its timeout, one waiter at a time. */
    @Test
    @Timeout(60)
    void blockingPollEndsWhenWokenOrOnItsTimeoutAndTakesOneWaiter() throws Exception {
        Communicator server = h.serve();
        Pair p = h.pair(server);
        Pair other = h.pair(server);
        Communicator reader = p.accepted();
        if (!reader.canBlockingPoll()) {
            assertFalse(reader.blockingPoll(TimeUnit.SECONDS.toNanos(WAIT_SECONDS), () -> false));
            reader.wakeBlockingPoll(); // nothing to wake: does nothing
            return;
        }
        long start = System.nanoTime();
        assertFalse(reader.blockingPoll(TimeUnit.MILLISECONDS.toNanos(50), () -> false), "nothing made it hold");
        long took = System.nanoTime() - start;
        assertTrue(took >= TimeUnit.MILLISECONDS.toNanos(45) && took < TimeUnit.SECONDS.toNanos(WAIT_SECONDS / 2),
                "a 50 ms wait took " + took / 1_000_000 + " ms");

        AtomicBoolean flag = new AtomicBoolean();
        CountDownLatch waiting = new CountDownLatch(1);
        CompletableFuture<Boolean> waiter = CompletableFuture.supplyAsync(() -> reader.blockingPoll(
                TimeUnit.SECONDS.toNanos(3 * WAIT_SECONDS), () -> {
                    waiting.countDown();
                    return flag.get();
                }));
        assertTrue(waiting.await(WAIT_SECONDS, TimeUnit.SECONDS), "the waiter started");
        // its connections share the transport's progress: a second thread does not wait on it as well
        long second = System.nanoTime();
        assertFalse(other.accepted().blockingPoll(TimeUnit.SECONDS.toNanos(WAIT_SECONDS), () -> false),
                "a second waiter on the same progress");
        assertTrue(System.nanoTime() - second < TimeUnit.SECONDS.toNanos(WAIT_SECONDS / 2), "and at once");
        long woken = System.nanoTime();
        flag.set(true);
        reader.wakeBlockingPoll();
        assertTrue(waiter.get(WAIT_SECONDS, TimeUnit.SECONDS), "woken, its condition held");
        assertTrue(System.nanoTime() - woken < TimeUnit.SECONDS.toNanos(WAIT_SECONDS / 2), "woken at once");
    }

    /** Reads {@code n} bytes as an event loop does: only what available() reports, re-arming when it is 0. */
    private static byte[] readAsALoopDoes(Communicator c, int n) throws Exception {
        ByteBuffer got = ByteBuffer.allocate(n);
        while (got.hasRemaining()) {
            int available = awaitAvailable(c);
            assertTrue(available > 0, "available " + available + " with " + got.remaining() + " bytes to come");
            got.limit(Math.min(n, got.position() + available));
            while (got.hasRemaining()) {
                assertTrue(c.read(got) > 0);
            }
            got.limit(n);
        }
        return got.array();
    }

    /**
     * {@code c.available()} once it is not 0, arming {@code c} and waiting (bounded) for its listener in between: how
     * a transport's own readiness tests wait too.
     */
    public static int awaitAvailable(Communicator c) throws Exception {
        for (;;) {
            int n = c.available();
            if (n != 0) {
                return n;
            }
            CountDownLatch told = new CountDownLatch(1);
            c.notifyReadable(told::countDown);
            assertTrue(told.await(WAIT_SECONDS, TimeUnit.SECONDS), "nothing became readable in " + WAIT_SECONDS
                    + " s");
        }
    }
}
