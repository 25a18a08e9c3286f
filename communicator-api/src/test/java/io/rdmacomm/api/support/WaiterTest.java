package io.rdmacomm.api.support;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.lang.reflect.Method;
import java.lang.management.ManagementFactory;
import java.net.SocketTimeoutException;
import java.nio.channels.AsynchronousCloseException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(30)
class WaiterTest {
    private final AtomicBoolean closed = new AtomicBoolean();
    private final ExecutorService pool = Executors.newCachedThreadPool();

    @AfterEach
    void stop() {
        pool.shutdownNow();
    }

    private Waiter waiter(long spinNanos, Waiter.Poller poller) {
        return new Waiter(spinNanos, poller, closed::get, () -> "with peer on test://here");
    }

    @Test
    void returnsOnceAnotherThreadPublishesAndWakes() throws Exception {
        Waiter w = waiter(0, null);
        AtomicBoolean ready = new AtomicBoolean();
        CountDownLatch waiting = new CountDownLatch(1);
        Future<?> f = pool.submit(() -> {
            waiting.countDown();
            w.await(ready::get, Waiter.NO_DEADLINE, "the event");
            return null;
        });
        waiting.await();
        ready.set(true);
        w.wake();
        f.get(10, TimeUnit.SECONDS);
    }

    @Test
    void aDeadlineThatPassesGivesATimeoutNamingWhatAndWhere() {
        Waiter w = waiter(0, null);
        long start = System.nanoTime();
        SocketTimeoutException e = assertThrows(SocketTimeoutException.class,
                () -> w.await(() -> false, Waiter.deadlineAfter(TimeUnit.MILLISECONDS.toNanos(100)), "sync"));
        assertTrue(System.nanoTime() - start >= TimeUnit.MILLISECONDS.toNanos(100));
        assertEquals("sync with peer on test://here timed out", e.getMessage());
    }

    @Test
    void closingTheOwnerUnblocksAWaiter() throws Exception {
        Waiter w = waiter(0, null);
        CountDownLatch waiting = new CountDownLatch(1);
        Future<?> f = pool.submit(() -> {
            waiting.countDown();
            w.await(() -> false, Waiter.NO_DEADLINE, "read");
            return null;
        });
        waiting.await();
        closed.set(true);
        w.wake();
        Exception e = assertThrows(Exception.class, () -> f.get(10, TimeUnit.SECONDS));
        assertTrue(e.getCause() instanceof AsynchronousCloseException, e.toString());
    }

    @Test
    void anInterruptEndsTheWaitAndStaysSet() throws Exception {
        Waiter w = waiter(0, null);
        AtomicBoolean stillInterrupted = new AtomicBoolean();
        CountDownLatch waiting = new CountDownLatch(1);
        Thread t = new Thread(() -> {
            waiting.countDown();
            try {
                w.await(() -> false, Waiter.NO_DEADLINE, "read");
            } catch (InterruptedIOException e) {
                stillInterrupted.set(Thread.currentThread().isInterrupted());
            } catch (Exception e) {
                throw new AssertionError(e);
            }
        });
        t.start();
        waiting.await();
        t.interrupt();
        t.join(TimeUnit.SECONDS.toMillis(10));
        assertTrue(stillInterrupted.get(), "no InterruptedIOException, or the interrupt status was cleared");
    }

    @Test
    void anUninterruptibleWaitOutlastsInterruptsAndSetsTheStatusAgain() throws Exception {
        Waiter w = waiter(0, null);
        AtomicBoolean ready = new AtomicBoolean();
        AtomicBoolean interruptedAfter = new AtomicBoolean();
        CountDownLatch waiting = new CountDownLatch(1);
        Thread t = new Thread(() -> {
            Thread.currentThread().interrupt();
            waiting.countDown();
            try {
                w.awaitUninterruptibly(ready::get, Waiter.NO_DEADLINE, "readers to leave");
                interruptedAfter.set(Thread.currentThread().isInterrupted());
            } catch (Exception e) {
                throw new AssertionError(e);
            }
        });
        t.start();
        waiting.await();
        for (int i = 0; i < 3; i++) {
            t.interrupt();
        }
        assertTrue(t.isAlive(), "the wait ended on an interrupt");
        ready.set(true);
        w.wake();
        t.join(TimeUnit.SECONDS.toMillis(10));
        assertTrue(!t.isAlive() && interruptedAfter.get(), "not returned, or the interrupt status was lost");
        assertThrows(SocketTimeoutException.class, () -> w.awaitUninterruptibly(() -> false,
                Waiter.deadlineAfter(TimeUnit.MILLISECONDS.toNanos(50)), "x"));
    }

    @Test
    void spinningPollsTheTransportThenSaysPollingEndedOnce() throws Exception {
        AtomicInteger polls = new AtomicInteger();
        AtomicInteger ended = new AtomicInteger();
        Waiter.Poller poller = new Waiter.Poller() {
            @Override
            public boolean poll() {
                polls.incrementAndGet();
                return false;
            }

            @Override
            public void pollingEnded() {
                ended.incrementAndGet();
            }
        };
        Waiter w = waiter(TimeUnit.MILLISECONDS.toNanos(20), poller);
        assertThrows(SocketTimeoutException.class,
                () -> w.await(() -> false, Waiter.deadlineAfter(TimeUnit.MILLISECONDS.toNanos(200)), "x"));
        assertTrue(polls.get() > 0, "never polled while spinning");
        assertEquals(1, ended.get());
    }

    /**
     * A virtual thread spins only briefly, yielding its carrier (one per core) between polls, then parks, where a
     * platform thread spins its whole spin. Runs where the JDK has virtual threads (CI's JDK 25 leg).
     */
    @Test
    void aVirtualThreadSpinsBrieflyThenParks() throws Exception {
        Method ofVirtual;
        try {
            ofVirtual = Thread.class.getMethod("ofVirtual");
        } catch (NoSuchMethodException e) {
            Assumptions.abort("no virtual threads on JDK " + Runtime.version());
            return;
        }
        AtomicInteger polls = new AtomicInteger();
        Waiter w = waiter(TimeUnit.SECONDS.toNanos(20), () -> {
            polls.incrementAndGet();
            return false;
        });
        assertTrue(!Waiter.isVirtual(Thread.currentThread()));
        AtomicBoolean ready = new AtomicBoolean();
        AtomicReference<Object> outcome = new AtomicReference<>();
        Runnable task = () -> {
            try {
                outcome.set(Waiter.isVirtual(Thread.currentThread()));
                w.await(ready::get, Waiter.NO_DEADLINE, "x");
            } catch (IOException | RuntimeException e) {
                outcome.set(e);
            }
        };
        Object builder = ofVirtual.invoke(null);
        Thread t = (Thread) Class.forName("java.lang.Thread$Builder").getMethod("unstarted", Runnable.class)
                .invoke(builder, task);
        long start = System.nanoTime();
        t.start();
        try {
            long deadline = start + TimeUnit.SECONDS.toNanos(10);
            Thread.State state;
            while ((state = t.getState()) != Thread.State.WAITING && state != Thread.State.TIMED_WAITING) {
                // a thread spinning the configured spin stays RUNNABLE for 20 s
                assertTrue(state != Thread.State.TERMINATED, "the virtual thread ended: " + outcome.get());
                assertTrue(System.nanoTime() < deadline, "the virtual thread did not park: " + state);
                Thread.onSpinWait();
            }
            assertTrue(polls.get() > 0, "the virtual thread did not poll the transport while it spun");
        } finally {
            // ends the wait whatever happened above, so that a failure leaves no thread spinning or parked
            ready.set(true);
            w.wake();
            t.join(TimeUnit.SECONDS.toMillis(10));
        }
        assertTrue(!t.isAlive());
        assertEquals(Boolean.TRUE, outcome.get(), "isVirtual on the virtual thread");
    }

    @Test
    void aConditionMetWhileSpinningNeverParks() throws Exception {
        AtomicInteger polls = new AtomicInteger();
        Waiter w = waiter(TimeUnit.SECONDS.toNanos(5), () -> polls.incrementAndGet() > 0);
        w.await(() -> polls.get() >= 1000, Waiter.NO_DEADLINE, "x");
        assertTrue(polls.get() >= 1000);
    }

    @Test
    void anUntimedWaitEndedByItsFirstPollsSetsNoDeadline() throws Exception {
        AtomicInteger polls = new AtomicInteger();
        Waiter w = waiter(TimeUnit.SECONDS.toNanos(5), () -> polls.incrementAndGet() > 0);
        long deadline = w.awaitFor(() -> polls.get() >= 3, Waiter.UNTIMED, TimeUnit.SECONDS.toNanos(1), "x");
        assertEquals(Waiter.UNTIMED, deadline, "read the clock within its first polls");
        assertEquals(Waiter.UNTIMED, w.awaitFor(() -> true, Waiter.UNTIMED, 1, "x"));
    }

    @Test
    void anUntimedWaitTimesOutAfterItsTimeoutAndReturnsTheDeadlineItSet() throws Exception {
        Waiter w = waiter(TimeUnit.MILLISECONDS.toNanos(5), () -> false);
        long start = System.nanoTime();
        SocketTimeoutException e = assertThrows(SocketTimeoutException.class,
                () -> w.awaitFor(() -> false, Waiter.UNTIMED, TimeUnit.MILLISECONDS.toNanos(100), "read"));
        assertTrue(System.nanoTime() - start >= TimeUnit.MILLISECONDS.toNanos(100));
        assertEquals("read with peer on test://here timed out", e.getMessage());

        AtomicInteger polls = new AtomicInteger();
        Waiter spinning = waiter(TimeUnit.SECONDS.toNanos(5), () -> polls.incrementAndGet() > 0);
        long before = System.nanoTime();
        long deadline = spinning.awaitFor(() -> polls.get() >= 10 * Waiter.CLOCK_EVERY, Waiter.UNTIMED,
                TimeUnit.SECONDS.toNanos(7), "x");
        long left = deadline - before;
        assertTrue(left > 0 && left <= TimeUnit.SECONDS.toNanos(7) + (System.nanoTime() - before),
                "deadline " + left + " ns after the wait began");
        assertEquals(Waiter.NO_DEADLINE, spinning.awaitFor(() -> polls.get() >= 20 * Waiter.CLOCK_EVERY,
                Waiter.UNTIMED, 0, "x"), "a timeout of 0 waits without a deadline");
    }

    @Test
    void moreWaitersThanSlotsAreAllWoken() throws Exception {
        Waiter w = waiter(0, null);
        AtomicBoolean ready = new AtomicBoolean();
        int n = Waiter.SLOTS * 2;
        CountDownLatch waiting = new CountDownLatch(n);
        List<Future<?>> all = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            all.add(pool.submit(() -> {
                waiting.countDown();
                w.await(ready::get, Waiter.NO_DEADLINE, "x");
                return null;
            }));
        }
        waiting.await();
        ready.set(true);
        w.wake();
        for (Future<?> f : all) {
            f.get(10, TimeUnit.SECONDS);
        }
    }

    @Test
    void waitingAndWakingAllocateNothing() throws Exception {
        com.sun.management.ThreadMXBean mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        Waiter w = waiter(0, null);
        AtomicInteger counter = new AtomicInteger();
        java.util.function.BooleanSupplier odd = () -> (counter.incrementAndGet() & 1) == 0;
        for (int i = 0; i < 20_000; i++) {
            w.await(odd, Waiter.NO_DEADLINE, "x");
            w.wake();
        }
        long before = mx.getCurrentThreadAllocatedBytes();
        for (int i = 0; i < 100_000; i++) {
            w.await(odd, Waiter.NO_DEADLINE, "x");
            w.wake();
        }
        long allocated = mx.getCurrentThreadAllocatedBytes() - before;
        assertTrue(allocated < 1024, allocated + " bytes allocated by 100 000 waits and wakes");
    }
}
