package io.rdmacomm.rdma.ucx;

import io.rdmacomm.api.support.RateLimitedLog;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The progress thread of a UCX node, as both UCX providers run it: it progresses the worker and polls while an
 * operation is pending (a pending send gets no wake-up event), sleeps in {@code ucp_worker_wait} otherwise, and stays
 * off the CPU while an application thread busy-polls the node or waits for its events in its place. A failure (up to
 * an Error in a callback) is logged, at most once a second, and progress goes on. A provider says what one round of
 * progress is and what is pending.
 */
public abstract class UcxProgress {
    private static final Logger LOG = LoggerFactory.getLogger(UcxProgress.class);
    /** How long a poller pauses between looks while an operation is pending (it gets no event). */
    protected static final long POLL_PAUSE_NANOS = 20_000;
    /**
     * How long the thread stays aside at a time while application threads poll: it looks again after this long and
     * stays aside for another period if one polled meanwhile, unless told polling ended ({@link #pollingEnded()});
     * bounds the delay of asynchronous progress if a poller vanishes.
     */
    private static final long APP_POLL_GRACE_NANOS = TimeUnit.MILLISECONDS.toNanos(1);
    /**
     * As {@link #APP_POLL_GRACE_NANOS} while an application thread sleeps in the worker's wait in place of this one
     * ({@link #beginAppWait()}): it has every event, so the thread looks less often (an idle server's loop may wait
     * for hours); this bounds how late the thread takes over once the application thread stops coming back.
     */
    private static final long APP_WAIT_GRACE_NANOS = TimeUnit.MILLISECONDS.toNanos(10);
    /** Progress failures, at most one line a second: a failure that repeats must not flood the log. */
    private final RateLimitedLog failures = new RateLimitedLog(LOG);
    private volatile boolean running = true;
    private volatile boolean sleeping;
    /** Whether the thread parks because an application thread polls; {@link #pollingEnded()} unparks it. */
    private volatile boolean asideForApp;
    /**
     * Set by every application poll, cleared by the thread each time it looks: a flag, not the time of the last poll,
     * since reading the clock on every poll was the largest cost of the busy-polling loop.
     */
    private volatile boolean appPolled;
    /** Whether an application thread waits for the worker's events in place of this one ({@link #beginAppWait()}). */
    private volatile boolean appWaiting;
    /** Held by the application thread waiting in this thread's place ({@link #waitFromApplication}). */
    private final ReentrantLock waitLock = new ReentrantLock();
    private Thread thread;

    /** Starts the thread, named {@code name}; once, at the end of the provider's constructor. */
    protected final void start(String name) {
        thread = new Thread(this::run, name);
        thread.setDaemon(true);
        thread.start();
    }

    /** The thread's name. */
    public final String threadName() {
        return thread.getName();
    }

    /** One round of progress (the worker, pending operations, whatever else the provider does); what happened. */
    protected abstract int progressRound() throws Exception;

    /** Whether an operation is pending: the thread then polls instead of sleeping. */
    protected abstract boolean pending();

    /** Checked once more just before sleeping: true if there is still nothing to do (it may progress again). */
    protected abstract boolean nothingToDo() throws Exception;

    /** Sleeps until the worker has events or is {@link #signal() signalled} ({@code ucp_worker_wait}). */
    protected abstract void waitForEvents();

    /** Wakes {@link #waitForEvents()} ({@code ucp_worker_signal}). */
    protected abstract void signal();

    /** One round of progress on an application thread waiting in this thread's place; what happened. */
    protected abstract int applicationRound() throws Exception;

    /**
     * Sleeps on the application thread waiting in this thread's place, at most {@code nanos}, until the worker has
     * events or is {@link #signal() signalled} (a signal since the last round ends it at once); not at all if
     * {@code until} holds or the thread was {@linkplain #stop() stopped}.
     */
    protected abstract void sleepInPlace(long nanos, BooleanSupplier until) throws Exception;

    /**
     * Waits on an application thread, up to {@code nanos}, for the worker's events and progresses them there, until
     * {@code until} holds or a {@link #wakeIfSleeping()}; this thread stays aside meanwhile, and after a wait that
     * ended in work (until its grace period passes without another), but takes over at once after one whose time was
     * up. One application thread at a time: false at once for another, and once {@link #stop()} began. Returns
     * {@code until}'s last value.
     */
    public final boolean waitFromApplication(long nanos, BooleanSupplier until) {
        if (!waitLock.tryLock()) {
            return false;
        }
        boolean timedOut = false;
        try {
            beginAppWait();
            long deadline = System.nanoTime() + nanos;
            while (!until.getAsBoolean()) {
                if (!running) {
                    timedOut = true;
                    return false;
                }
                if (applicationRound() > 0) {
                    continue;
                }
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    timedOut = true;
                    return until.getAsBoolean();
                }
                if (pending()) {
                    // a pending operation gets no event: look again soon, as this thread does
                    LockSupport.parkNanos(this, Math.min(left, POLL_PAUSE_NANOS));
                    continue;
                }
                sleepInPlace(left, until);
            }
            return true;
        } catch (Exception e) { // NOPMD: the caller waits another way; this thread takes over at once
            applicationFailed(e);
            timedOut = true;
            return false;
        } finally {
            endAppWait();
            waitLock.unlock();
            if (timedOut) {
                // the caller is idle and may sleep elsewhere now; after a wait that ended in work it comes back
                // soon, and the thread stays aside for its grace period
                pollingEnded();
            }
        }
    }

    /** Whether the thread runs: {@link #sleepInPlace} must not touch the worker once it was stopped. */
    protected final boolean running() {
        return running;
    }

    private void run() {
        while (running) {
            try {
                if (appPolled || appWaiting) {
                    // a busy-polling or waiting application thread drives the worker: stay off its lock and off the
                    // CPU (waking up every few microseconds costs the poller its core on a small machine)
                    boolean waiting = appWaiting;
                    appPolled = false;
                    asideForApp = true;
                    LockSupport.parkNanos(this, waiting ? APP_WAIT_GRACE_NANOS : APP_POLL_GRACE_NANOS);
                    asideForApp = false;
                    continue;
                }
                if (progressRound() == 0) {
                    if (pending()) {
                        LockSupport.parkNanos(POLL_PAUSE_NANOS);
                        continue;
                    }
                    sleeping = true;
                    // an application thread that began to wait meanwhile has the worker: no last look here
                    if (!appWaiting && nothingToDo() && running) {
                        waitForEvents();
                        if (appWaiting) {
                            // an application thread began to wait meanwhile: this wait may have taken the signal
                            // meant for it (waiting arms the worker, which drains its wake-up descriptor): pass it on
                            signal();
                        }
                    }
                    sleeping = false;
                }
            } catch (Throwable e) { // NOPMD: one peer's failure (up to an Error in its callback) must not end progress
                sleeping = false;
                if (running) {
                    failures.warn("UCX progress failed, progressing on: {}", e.toString(), e);
                }
            }
        }
    }

    /** Logs a failure of progress on an application thread, as the thread's own (at most one line a second). */
    protected final void applicationFailed(Throwable e) {
        failures.warn("UCX progress on an application thread failed: {}", e.toString(), e);
    }

    /** Whether the thread sleeps in {@link #waitForEvents()}: who leaves work for it then {@link #signal()}s. */
    public final boolean sleeping() {
        return sleeping;
    }

    /** Signals the thread if it sleeps: work was left for it. */
    public final void wakeIfSleeping() {
        if (sleeping || appWaiting) {
            signal();
        }
    }

    /** An application thread polls the node: the thread stays aside for another period. */
    public final void applicationPolled() {
        if (!appPolled) {
            appPolled = true; // written once per period, not on every poll
        }
    }

    /**
     * An application thread is about to wait for the worker's events and progress them itself: the thread stays
     * aside until {@link #endAppWait()} and a grace period after it; {@link #wakeIfSleeping()} signals the worker
     * meanwhile. One application thread at a time.
     */
    protected final void beginAppWait() {
        appWaiting = true;
        applicationPolled();
    }

    /** The application thread of {@link #beginAppWait()} stopped waiting (it may come back within the grace period). */
    protected final void endAppWait() {
        appWaiting = false;
        applicationPolled();
    }

    /** An application thread stopped polling: take over progress now rather than after the grace period. */
    public final void pollingEnded() {
        appPolled = false;
        if (asideForApp) {
            LockSupport.unpark(thread);
        }
    }

    /**
     * Stops the thread, and waits for an application thread waiting in its place ({@link #waitFromApplication}) to
     * leave the worker, signalling it meanwhile; false if either did not happen within 5 s, or if called from that
     * waiting thread itself (the caller must not destroy the worker then).
     */
    public final boolean stop() {
        running = false;
        if (waitLock.isHeldByCurrentThread()) {
            // called from inside this thread's own wait in the worker (a listener that closed the last connection):
            // the worker must outlive the call that is still in it; the thread ends all the same
            signal();
            LockSupport.unpark(thread);
            return false;
        }
        // not cut short by an interrupt (restored at the end): the caller destroys the worker once this returns true
        boolean interrupted = Thread.interrupted();
        try {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            LockSupport.unpark(thread);
            // signalled again and again: an application thread's wait in the worker may take a signal meant for it
            boolean left = false;
            while (System.nanoTime() - deadline < 0) {
                signal();
                if (thread.isAlive()) {
                    interrupted |= joinBriefly();
                } else if (waitLock.tryLock()) {
                    waitLock.unlock();
                    left = true;
                    break;
                } else {
                    LockSupport.parkNanos(this, TimeUnit.MILLISECONDS.toNanos(1));
                }
            }
            return left;
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Joins the thread for 10 ms; true if interrupted meanwhile (the interrupt is then cleared, for the caller). */
    private boolean joinBriefly() {
        try {
            thread.join(10);
            return false;
        } catch (InterruptedException e) {
            return true;
        }
    }
}
