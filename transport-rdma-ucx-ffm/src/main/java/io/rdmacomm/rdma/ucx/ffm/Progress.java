package io.rdmacomm.rdma.ucx.ffm;

import io.rdmacomm.rdma.ucx.UcxProgress;
import io.rdmacomm.ucx.ffm.UcpWorker;
import java.util.Arrays;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;
import java.util.function.IntSupplier;

/**
 * The node's progress thread and the operations libucp did not finish inside their call. The thread progresses the
 * worker and polls those operations while any is pending (a pending send gets no wake-up event), sleeps in
 * {@code ucp_worker_wait} otherwise, and stays aside while an application thread busy-polls. Whoever polls (this
 * thread or a busy-polling application thread, one at a time) owns the pending operations' requests. The thread's
 * loop is {@link UcxProgress}'s, shared with ucx-jucx.
 */
final class Progress extends UcxProgress {
    private final UcpWorker worker;
    /** Set by {@link #wake()}: deferred messages wait; the thread must not go to sleep before looking. */
    private volatile boolean deferredWork;
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
        start(threadName);
    }

    @Override
    protected int progressRound() {
        deferredWork = false;
        return progressLocked() + pollPending() + drainDeferred.getAsInt();
    }

    @Override
    protected boolean pending() {
        return pendingCount > 0;
    }

    @Override
    protected boolean nothingToDo() {
        return !deferredWork && progressLocked() == 0 && pendingCount == 0;
    }

    @Override
    protected void waitForEvents() {
        worker.waitForEvents();
    }

    @Override
    protected void signal() {
        worker.signal();
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
        wakeIfSleeping();
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
        wakeIfSleeping();
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

    @Override
    protected int applicationRound() {
        deferredWork = false;
        return progressOnce();
    }

    /** Arms the worker (which consumes a signal made before: nothing to wait for then) and polls its event fd. */
    @Override
    protected void sleepInPlace(long nanos, BooleanSupplier until) {
        boolean armed;
        lock.lock();
        try {
            armed = running() && worker.arm();
        } finally {
            lock.unlock();
        }
        if (armed && !deferredWork && !until.getAsBoolean() && running()) {
            worker.awaitArmed(nanos);
        }
    }

    /** One round of progress on an application thread: the worker (unless another thread has it), pending ops. */
    private int progressOnce() {
        int n = 0;
        if (lock.tryLock()) {
            try {
                n = worker.progress();
            } finally {
                lock.unlock();
            }
        }
        return n + pollPending() + drainDeferred.getAsInt();
    }

    /** Progresses on an application thread that busy-polls; false if nothing happened. */
    boolean pollFromApplication() {
        applicationPolled();
        try {
            // another thread progressing the worker is as good as this one doing it
            return progressOnce() > 0;
        } catch (RuntimeException e) {
            return false;
        }
    }
}
