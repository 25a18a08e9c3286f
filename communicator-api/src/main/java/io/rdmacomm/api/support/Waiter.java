package io.rdmacomm.api.support;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.net.SocketTimeoutException;
import java.nio.channels.AsynchronousCloseException;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * How a transport's threads wait for its events: until a condition holds, a thread first spins for a configured
 * time (progressing the transport through a {@link Poller} where it has one, for latency), then parks until
 * {@link #wake()}, its deadline, the owner's close, or an interrupt. Parking is in bounded slices, so a lost wake-up
 * costs at most {@link #PARK_SLICE_NANOS}, never a hang.
 *
 * <p>Every event that may make a condition true must call {@link #wake()} after publishing it; a waiting thread
 * enlists itself before the last check of its condition before it parks (a spinning thread only when its spin ends),
 * so no wake-up falls between check and park. Waiting and waking allocate nothing as long as at most
 * {@link #SLOTS} threads wait at once.
 *
 * <p>A virtual thread spins at most {@link #VIRTUAL_SPIN_NANOS}, yielding its carrier between polls, then parks. Its
 * carrier is one of as many as there are cores and is not preempted: a few virtual threads spinning the whole
 * spin would hold every carrier while others, whose bytes may have come, wait to run. A platform thread spinning is
 * one thread among many that the operating system time-slices.
 */
public final class Waiter {
    /** A deadline that never passes. */
    public static final long NO_DEADLINE = Long.MIN_VALUE;
    /** The longest a thread parks before it checks its condition again by itself. */
    public static final long PARK_SLICE_NANOS = TimeUnit.MILLISECONDS.toNanos(50);
    static final int SLOTS = 16;
    /** A deadline not set yet: see {@link #awaitFor}. */
    public static final long UNTIMED = Long.MAX_VALUE;
    /**
     * A spinning platform thread reads the clock once per this many polls (a power of two); a virtual thread reads it
     * at every poll.
     */
    public static final int CLOCK_EVERY = 64;
    /** The longest a virtual thread spins (less if the configured spin is shorter). */
    public static final long VIRTUAL_SPIN_NANOS = TimeUnit.MICROSECONDS.toNanos(10);
    /** What {@link #enlist} returns for a thread that went to the overflow set; {@link #NOT_ENLISTED}: not at all. */
    private static final int OVERFLOW = -1;
    private static final int NOT_ENLISTED = -2;

    /** Progresses a transport on a spinning thread. */
    public interface Poller {
        /**
         * Does one round of the transport's progress; returns whether anything happened. Must return promptly: a
         * spinning platform thread reads the clock (for its spin's end and its deadline) only every
         * {@link Waiter#CLOCK_EVERY} polls.
         */
        boolean poll();

        /** The calling thread stops spinning and is about to park (a progress thread may take over again). */
        default void pollingEnded() {
        }
    }

    private static final Poller NO_POLLER = () -> false;
    /** {@code Thread.isVirtual()} where the JDK has it (21 and later), else null: this code is compiled for JDK 17. */
    private static final MethodHandle IS_VIRTUAL = isVirtualHandle();

    private final long spinNanos;
    private final Poller poller;
    private final BooleanSupplier closed;
    private final Supplier<String> context;
    private final AtomicReferenceArray<Thread> slots = new AtomicReferenceArray<>(SLOTS);
    private final Set<Thread> overflow = ConcurrentHashMap.newKeySet();

    /**
     * @param spinNanos how long a waiting thread spins before it parks (0: park at once)
     * @param poller progresses the transport while a thread spins, or null
     * @param closed whether the owner was closed: a waiting thread then throws {@link AsynchronousCloseException}
     * @param context where the wait happens, for timeout messages ({@code "with 10.0.0.2:5000 on rdma://..."});
     *     asked only when a wait times out
     */
    public Waiter(long spinNanos, Poller poller, BooleanSupplier closed, Supplier<String> context) {
        if (spinNanos < 0) {
            throw new IllegalArgumentException("negative spin time " + spinNanos);
        }
        this.spinNanos = spinNanos;
        this.poller = poller == null ? NO_POLLER : poller;
        this.closed = closed;
        this.context = context;
    }

    /** The deadline {@code timeoutNanos} from now, or {@link #NO_DEADLINE} for a timeout of 0 (wait forever). */
    public static long deadlineAfter(long timeoutNanos) {
        return timeoutNanos == 0 ? NO_DEADLINE : System.nanoTime() + timeoutNanos;
    }

    /** Whether {@code deadline} has passed at {@code now} (a {@link System#nanoTime()} value). */
    public static boolean expired(long deadline, long now) {
        return deadline != NO_DEADLINE && now - deadline >= 0;
    }

    /** Wakes every thread waiting on this waiter, to check its condition again. */
    public void wake() {
        for (int i = 0; i < SLOTS; i++) {
            Thread t = slots.get(i);
            if (t != null) {
                LockSupport.unpark(t);
            }
        }
        if (!overflow.isEmpty()) {
            overflow.forEach(LockSupport::unpark);
        }
    }

    /**
     * Returns once {@code ready} holds. Conditions that a failure of the connection makes final should include it
     * ({@code () -> done || failure != null}) and the caller reports the failure.
     *
     * @param deadline a {@link System#nanoTime()} value, or {@link #NO_DEADLINE}
     * @param what what is waited for, for the timeout message ({@code "sync (readTimeout)"})
     * @throws SocketTimeoutException if the deadline passes first
     * @throws AsynchronousCloseException if the owner is closed while waiting
     * @throws InterruptedIOException if the thread is interrupted (its interrupt status stays set)
     */
    public void await(BooleanSupplier ready, long deadline, String what) throws IOException {
        awaitFor(ready, deadline, 0, what);
    }

    /** Whether waiting threads spin (busy-poll) before they park (virtual threads briefly: see above). */
    public boolean spins() {
        return spinNanos > 0;
    }

    /** Whether {@code t} is a virtual thread (never on a JDK without them). */
    public static boolean isVirtual(Thread t) {
        if (IS_VIRTUAL == null) {
            return false;
        }
        try {
            return (boolean) IS_VIRTUAL.invokeExact(t);
        } catch (Throwable e) {
            throw new IllegalStateException("Thread.isVirtual failed", e);
        }
    }

    private static MethodHandle isVirtualHandle() {
        try {
            return MethodHandles.publicLookup().findVirtual(Thread.class, "isVirtual",
                    MethodType.methodType(boolean.class));
        } catch (NoSuchMethodException | IllegalAccessException e) {
            return null;
        }
    }

    /**
     * {@link #await}, with a deadline that may start with the wait: if {@code deadline} is {@link #UNTIMED}, it
     * becomes {@code timeoutNanos} (0: none) after the wait first reads the clock, which a platform thread's wait ended
     * by its first polls never does (on a busy-polled round trip, the clock was the spinning loop's largest cost); a
     * virtual thread reads it on its first look.
     *
     * @return the deadline in effect, to pass to a later wait of the same operation ({@link #UNTIMED} if none was
     *     set yet)
     */
    public long awaitFor(BooleanSupplier ready, long deadline, long timeoutNanos, String what) throws IOException {
        if (ready.getAsBoolean()) {
            return deadline;
        }
        Thread me = Thread.currentThread();
        boolean spinning = spinNanos > 0;
        boolean virtual = spinning && isVirtual(me);
        // a spinning thread needs no wake-up: it enlists (an atomic write) only once it is about to park, and looks at
        // its condition again after that, so no wake-up falls between its last look and its park
        int slot = spinning ? NOT_ENLISTED : enlist(me);
        try {
            long spinEnd = 0;
            int polls = 0;
            while (!ready.getAsBoolean()) {
                if (closed.getAsBoolean()) {
                    throw new AsynchronousCloseException();
                }
                if (spinning && !virtual && (++polls & (CLOCK_EVERY - 1)) != 0) {
                    // between clock reads: at most CLOCK_EVERY polls late for the spin's end or the deadline
                    if (!poller.poll()) {
                        Thread.onSpinWait();
                    }
                    continue;
                }
                long now = System.nanoTime();
                if (deadline == UNTIMED) {
                    deadline = timeoutNanos == 0 ? NO_DEADLINE : now + timeoutNanos;
                }
                if (expired(deadline, now)) {
                    throw new SocketTimeoutException(what + " " + context.get() + " timed out");
                }
                if (spinning) {
                    if (spinEnd == 0) {
                        spinEnd = now + (virtual ? Math.min(spinNanos, VIRTUAL_SPIN_NANOS) : spinNanos);
                    } else if (now - spinEnd >= 0) {
                        spinning = false;
                    }
                    if (spinning) {
                        if (virtual && !poller.poll()) {
                            // a virtual thread reads the clock at every poll (so it polls at least once, however
                            // late its second look), and lets queued virtual threads run between polls
                            Thread.yield();
                        }
                        continue;
                    }
                    slot = enlist(me);
                    poller.pollingEnded();
                    // the poller may have stopped something that relied on the polling: look again before parking
                    continue;
                }
                if (me.isInterrupted()) {
                    throw new InterruptedIOException("interrupted while waiting for " + what + " " + context.get());
                }
                long nanos = deadline == NO_DEADLINE ? PARK_SLICE_NANOS : Math.min(PARK_SLICE_NANOS, deadline - now);
                LockSupport.parkNanos(this, nanos);
            }
            return deadline;
        } finally {
            delist(slot, me);
        }
    }

    /**
     * Like {@link #await}, but an interrupt does not end the wait: for waits that must not be cut short, such as a
     * close waiting until no thread uses memory it is about to release. The interrupt status is set again on
     * return.
     *
     * @throws SocketTimeoutException if the deadline passes first
     * @throws AsynchronousCloseException if the owner is closed while waiting
     */
    public void awaitUninterruptibly(BooleanSupplier ready, long deadline, String what) throws IOException {
        boolean interrupted = Thread.interrupted();
        try {
            while (true) {
                try {
                    await(ready, deadline, what);
                    return;
                } catch (SocketTimeoutException e) {
                    throw e;
                } catch (InterruptedIOException e) {
                    interrupted = true;
                    Thread.interrupted();
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private int enlist(Thread t) {
        for (int i = 0; i < SLOTS; i++) {
            if (slots.get(i) == null && slots.compareAndSet(i, null, t)) {
                return i;
            }
        }
        overflow.add(t);
        return OVERFLOW;
    }

    private void delist(int slot, Thread t) {
        if (slot == NOT_ENLISTED) {
            return;
        }
        if (slot >= 0) {
            slots.set(slot, null);
        } else {
            overflow.remove(t);
        }
    }
}
