package io.rdmacomm.api.support;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The threads a server started, kept until they have ended, so that closing the server can join every one. A thread
 * that removed itself from a set in its own {@code finally} block was still running when it did, and a close that
 * looked at that moment neither saw nor joined it. Ended threads are dropped whenever the set has doubled since the
 * last sweep, so it holds at most about twice the threads alive; a thread added before it started is kept.
 */
public final class ServerThreads {
    private static final int FIRST_SWEEP = 64;

    private final Set<Thread> threads = ConcurrentHashMap.newKeySet();
    private final AtomicInteger sweepAt = new AtomicInteger(FIRST_SWEEP);

    /**
     * {@code task} as the task of a thread this set will keep: it lets go of {@code task} as it starts running it.
     * An ended thread is kept until the next sweep, and on newer JDKs (checked on 25) an ended thread still holds the
     * task it was made with, so a task that holds a connection would keep the closed connection, its buffers
     * included, for as long.
     */
    public static Runnable releasing(Runnable task) {
        AtomicReference<Runnable> held = new AtomicReference<>(Objects.requireNonNull(task, "task"));
        return () -> {
            Runnable t = held.getAndSet(null);
            if (t != null) {
                t.run();
            }
        };
    }

    /** Keeps {@code t} (started or about to be) until it has ended. */
    public void add(Thread t) {
        threads.add(t);
        int at = sweepAt.get();
        if (threads.size() >= at && sweepAt.compareAndSet(at, Integer.MAX_VALUE)) {
            threads.removeIf(x -> x.getState() == Thread.State.TERMINATED);
            sweepAt.set(Math.max(FIRST_SWEEP, threads.size() * 2));
        }
    }

    /** How many threads are kept (the ended ones not swept yet included). */
    public int size() {
        return threads.size();
    }

    /**
     * Joins every thread kept (but the calling one), all by {@code deadlineNanos} ({@link System#nanoTime()}).
     *
     * @return the threads still alive at the deadline
     */
    public List<Thread> joinAll(long deadlineNanos) throws InterruptedException {
        List<Thread> alive = new ArrayList<>();
        for (Thread t : List.copyOf(threads)) {
            long left = deadlineNanos - System.nanoTime();
            if (left > 0 && t.getState() != Thread.State.NEW && t != Thread.currentThread()) {
                t.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(left)));
            }
            if (t.isAlive() && t != Thread.currentThread()) {
                alive.add(t);
            }
        }
        return alive;
    }
}
