package io.rdmacomm.rdma.ucx.ffm;

import io.rdmacomm.api.support.RateLimitedLog;
import io.rdmacomm.ucx.ffm.UcpWorker;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.IntSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The node's progress thread and the operations libucp did not finish inside their call. The thread progresses the
 * worker and polls those operations while any is pending (a pending send gets no wake-up event), sleeps in
 * {@code ucp_worker_wait} otherwise, and stays aside while an application thread busy-polls. Whoever polls (this
 * thread or a busy-polling application thread, one at a time) owns the pending operations' requests.
 */
final class Progress {
    private static final Logger LOG = LoggerFactory.getLogger(Progress.class);
    /** Progress failures, at most one line a second: a failure that repeats must not flood the log. */
    private final RateLimitedLog failures = new RateLimitedLog(LOG);
    private static final long POLL_PAUSE_NANOS = 20_000;
    /**
     * How long the thread stays aside at a time while application threads poll: it looks again after this long and
     * stays aside for another period if one polled meanwhile, unless told polling ended.
     */
    private static final long APP_POLL_GRACE_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

    private final UcpWorker worker;
    private final Thread thread;
    private volatile boolean running = true;
    private volatile boolean sleeping;
    /** Set by {@link #wake()}: deferred messages wait; the thread must not go to sleep before looking. */
    private volatile boolean deferredWork;
    private volatile boolean asideForApp;
    /**
     * Set by every application poll, cleared by this thread each time it looks: a flag, not the time of the last
     * poll, since reading the clock on every poll was the largest cost of the busy-polling loop.
     */
    private volatile boolean appPolled;
    /** Newly pending operations, handed from issuing threads to the poller. */
    private final Object incomingLock = new Object();
    private Op[] incoming = new Op[64];
    private int incomingCount;
    private volatile int pendingCount;
    /** Held by the thread polling the pending operations; it owns {@link #polling}. */
    private final ReentrantLock pollLock = new ReentrantLock();
    private Op[] polling = new Op[64];
    private int pollingCount;

    private final IntSupplier drainDeferred;
    private final ReentrantLock lock;

    Progress(UcpWorker worker, ReentrantLock lock, IntSupplier drainDeferred, String threadName) {
        this.worker = worker;
        this.lock = lock;
        this.drainDeferred = drainDeferred;
        thread = new Thread(this::run, threadName);
        thread.setDaemon(true);
        thread.start();
    }

    private void run() {
        while (running) {
            try {
                if (appPolled) {
                    // a busy-polling application thread drives the worker: stay off the CPU (on a small machine the
                    // periodic wake-ups cost the poller its core)
                    appPolled = false;
                    asideForApp = true;
                    LockSupport.parkNanos(this, APP_POLL_GRACE_NANOS);
                    asideForApp = false;
                    continue;
                }
                deferredWork = false;
                if (progressLocked() + pollPending() + drainDeferred.getAsInt() == 0) {
                    if (pendingCount > 0) {
                        LockSupport.parkNanos(POLL_PAUSE_NANOS);
                        continue;
                    }
                    sleeping = true;
                    if (!deferredWork && progressLocked() == 0 && pendingCount == 0 && running) {
                        worker.waitForEvents();
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

    /** An operation that did not finish inside its call: polled from now on. */
    void pend(Op op) {
        synchronized (incomingLock) {
            if (incomingCount == incoming.length) {
                incoming = Arrays.copyOf(incoming, incomingCount * 2);
            }
            incoming[incomingCount++] = op;
            pendingCount++;
        }
        if (sleeping) {
            worker.signal();
        }
    }

    private int progressLocked() {
        lock.lock();
        try {
            return worker.progress();
        } finally {
            lock.unlock();
        }
    }

    /** Makes the thread look at the node again (deferred messages to deliver). */
    void wake() {
        deferredWork = true;
        if (sleeping) {
            worker.signal();
        }
    }

    /** Polls the pending operations (unless another thread does); advances the finished ones. */
    private int pollPending() {
        if (pendingCount == 0 || !pollLock.tryLock()) {
            return 0;
        }
        int finished = 0;
        try {
            synchronized (incomingLock) {
                if (pollingCount + incomingCount > polling.length) {
                    polling = Arrays.copyOf(polling, Math.max(polling.length * 2, pollingCount + incomingCount));
                }
                System.arraycopy(incoming, 0, polling, pollingCount, incomingCount);
                Arrays.fill(incoming, 0, incomingCount, null);
                pollingCount += incomingCount;
                incomingCount = 0;
            }
            for (int i = 0; i < pollingCount;) {
                Op op = polling[i];
                if (!op.request.isDone()) {
                    i++;
                    continue;
                }
                polling[i] = polling[--pollingCount];
                polling[pollingCount] = null;
                synchronized (incomingLock) {
                    pendingCount--;
                }
                finished++;
                op.advance();
            }
        } finally {
            pollLock.unlock();
        }
        return finished;
    }

    /** Progresses on an application thread that busy-polls; false if nothing happened. */
    boolean pollFromApplication() {
        if (!appPolled) {
            appPolled = true; // written once per period, not on every poll
        }
        try {
            // another thread progressing the worker is as good as this one doing it
            int n = 0;
            if (lock.tryLock()) {
                try {
                    n = worker.progress();
                } finally {
                    lock.unlock();
                }
            }
            return n + pollPending() + drainDeferred.getAsInt() > 0;
        } catch (RuntimeException e) {
            return false;
        }
    }

    /** An application thread stopped polling: take over progress now rather than after the grace period. */
    void pollingEnded() {
        appPolled = false;
        if (asideForApp) {
            LockSupport.unpark(thread);
        }
    }

    /** Stops the thread; false if it did not stop within 5 s. */
    boolean stop() {
        running = false;
        worker.signal();
        LockSupport.unpark(thread);
        try {
            thread.join(TimeUnit.SECONDS.toMillis(5));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return !thread.isAlive();
    }
}
