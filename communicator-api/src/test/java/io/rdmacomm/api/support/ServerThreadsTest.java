package io.rdmacomm.api.support;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(30)
class ServerThreadsTest {

    @Test
    void aReleasingTaskRunsItsTaskOnceAndThenLetsGoOfIt() throws Exception {
        AtomicInteger runs = new AtomicInteger();
        Object captured = new Object();
        WeakReference<Object> ref = new WeakReference<>(captured);
        Runnable task = ServerThreads.releasing(holding(captured, runs));
        captured = null;
        Thread t = new Thread(task, "releasing");
        t.start();
        t.join(TimeUnit.SECONDS.toMillis(10));
        assertFalse(t.isAlive());
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (ref.get() != null && System.nanoTime() < deadline) {
            System.gc();
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10));
        }
        // the ended thread and the releasing task are still reachable here, as a server keeps ended threads
        assertTrue(ref.get() == null, "a releasing task still holds what its task captured after it ran");
        task.run(); // a second run does nothing
        assertEquals(1, runs.get());
        assertEquals("releasing", t.getName());
    }

    /** A task that holds {@code o}, as a session's task holds its connection. */
    private static Runnable holding(Object o, AtomicInteger runs) {
        return () -> {
            if (o != null) {
                runs.incrementAndGet();
            }
        };
    }

    @Test
    void endedThreadsAreSweptAndOnesNotStartedAreKept() throws Exception {
        ServerThreads threads = new ServerThreads();
        Thread notStarted = new Thread(() -> { }, "not-started");
        threads.add(notStarted);
        for (int i = 0; i < 1000; i++) {
            Thread t = new Thread(() -> { }, "short-" + i);
            threads.add(t);
            t.start();
            t.join();
        }
        assertTrue(threads.size() < 200, "ended threads are swept as the set grows: " + threads.size() + " kept");
        assertEquals(notStarted.getState(), Thread.State.NEW);
        // the one added before it started is still there: joinAll reports it (not alive) only once started
        notStarted.start();
        assertTrue(threads.joinAll(System.nanoTime() + TimeUnit.SECONDS.toNanos(5)).isEmpty());
    }

    @Test
    void joinAllWaitsForEveryThreadAndNamesThoseStillAliveAtTheDeadline() throws Exception {
        ServerThreads threads = new ServerThreads();
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch endless = new CountDownLatch(1);
        List<Thread> started = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            Thread t = new Thread(() -> await(release), "finishing-" + i);
            started.add(t);
            threads.add(t);
            t.start();
        }
        Thread stuck = new Thread(() -> await(endless), "stuck");
        threads.add(stuck);
        stuck.start();
        release.countDown();
        List<Thread> alive = threads.joinAll(System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(300));
        assertEquals(List.of(stuck), alive);
        for (Thread t : started) {
            assertFalse(t.isAlive(), t.getName() + " was joined");
        }
        endless.countDown();
        stuck.join();
    }

    @Test
    void aThreadThatClosesTheServerDoesNotWaitForItself() throws Exception {
        ServerThreads threads = new ServerThreads();
        AtomicReference<List<Thread>> seen = new AtomicReference<>();
        CountDownLatch added = new CountDownLatch(1);
        Thread closer = new Thread(() -> {
            await(added);
            try {
                seen.set(threads.joinAll(System.nanoTime() + TimeUnit.SECONDS.toNanos(20)));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "closer");
        threads.add(closer);
        closer.start();
        long start = System.nanoTime();
        added.countDown();
        closer.join();
        assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(10),
                "it did not join itself until the deadline");
        assertEquals(List.of(), seen.get());
    }

    private static void await(CountDownLatch latch) {
        try {
            latch.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
