package io.rdmacomm.rdma.ucx;

import io.rdmacomm.api.support.Waiter;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import org.openucx.jucx.UcxUtils;
import org.openucx.jucx.ucp.UcpAmData;
import org.openucx.jucx.ucp.UcpContext;
import org.openucx.jucx.ucp.UcpRequest;
import org.openucx.jucx.ucp.UcpWorker;
import org.openucx.jucx.ucp.UcpWorkerParams;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A thread-safe UCP worker and the thread that progresses it, sleeping in {@code ucp_worker_wait} when idle so
 * one-sided operations and control messages complete while the application does not call in. Shared by a
 * listener and its channels (reference counted); active messages are routed to channels by the receiver id in
 * their header.
 */
final class WorkerLoop {
    private static final Logger LOG = LoggerFactory.getLogger(WorkerLoop.class);
    static final int AM_ID = 1;
    static final int AM_CONTROL = 2;
    static final int AM_WRITE = 3;
    private static final long POLL_PAUSE_NANOS = 20_000;
    /**
     * How long the progress thread stays aside after an application thread last polled, unless told sooner that
     * polling ended ({@link #pollingEnded()}); bounds the delay of asynchronous progress if a poller vanishes.
     */
    private static final long APP_POLL_GRACE_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

    final UcpContext context;
    final UcpWorker worker;
    private final Thread thread;
    private final Map<Integer, UcxChannel> channels = new ConcurrentHashMap<>();
    private volatile boolean running = true;
    private volatile boolean sleeping;
    /** Whether the thread parks because an application thread polls; {@link #pollingEnded()} unparks it. */
    private volatile boolean asideForApp;
    private volatile long lastAppPoll = System.nanoTime() - APP_POLL_GRACE_NANOS;
    /** UCX requests not completed yet: while any exists the thread polls, since pending sends get no wakeup. */
    private final AtomicInteger inflight = new AtomicInteger();
    private int users = 1;
    private final List<Waiter> progressWatchers = new CopyOnWriteArrayList<>();

    WorkerLoop(String what) {
        context = UcxRuntime.acquire();
        UcpWorker w;
        try {
            w = context.newWorker(new UcpWorkerParams().requestThreadSafety().requestWakeupRMA()
                    .requestWakeupTX().requestWakeupRX());
        } catch (RuntimeException e) {
            UcxRuntime.release();
            throw e;
        }
        worker = w;
        worker.setAmRecvHandler(AM_ID, (h, hs, d, ep) -> onAm(AM_ID, h, hs, d));
        worker.setAmRecvHandler(AM_CONTROL, (h, hs, d, ep) -> onAm(AM_CONTROL, h, hs, d));
        worker.setAmRecvHandler(AM_WRITE, (h, hs, d, ep) -> onAm(AM_WRITE, h, hs, d));
        thread = new Thread(this::run, "rdmacomm-rdma-progress-" + what);
        thread.setDaemon(true);
        thread.start();
    }

    private int onAm(int type, long headerAddress, long headerSize, UcpAmData data) {
        ByteBuffer header = UcxUtils.getByteBufferView(headerAddress, headerSize).order(ByteOrder.BIG_ENDIAN);
        int receiver = header.getInt(0);
        UcxChannel ch = channels.get(receiver);
        if (ch == null) {
            LOG.warn("active message for unknown channel {} dropped ({} header bytes, {} data bytes)", receiver,
                    headerSize, data.getLength());
            return 0;
        }
        ch.onAm(type, header, data);
        return 0;
    }

    private void run() {
        while (running) {
            try {
                long sinceAppPoll = System.nanoTime() - lastAppPoll;
                if (sinceAppPoll < APP_POLL_GRACE_NANOS) {
                    // a busy-polling application thread drives the worker: stay off its lock and off the CPU
                    // (waking up every few microseconds costs the poller its core on a small machine)
                    asideForApp = true;
                    if (System.nanoTime() - lastAppPoll < APP_POLL_GRACE_NANOS) {
                        LockSupport.parkNanos(this, APP_POLL_GRACE_NANOS - sinceAppPoll);
                    }
                    asideForApp = false;
                    continue;
                }
                if (progress() == 0) {
                    if (inflight.get() > 0) {
                        LockSupport.parkNanos(POLL_PAUSE_NANOS);
                        continue;
                    }
                    sleeping = true;
                    if (worker.progress() == 0 && inflight.get() == 0 && running) {
                        worker.waitForEvents();
                    }
                    sleeping = false;
                }
            } catch (Exception | AssertionError e) {
                if (running) {
                    LOG.error("UCX progress failed", e);
                }
            }
        }
    }

    /** An operation was issued: poll until {@link #end()}, and wake the thread if it sleeps. */
    void begin() {
        inflight.incrementAndGet();
        if (sleeping) {
            worker.signal();
        }
    }

    /**
     * Counts a request about to be issued as in flight, without waking the thread: most requests complete inside
     * the call that issues them, and {@link #issued} wakes the thread only for those that did not.
     */
    void track() {
        inflight.incrementAndGet();
    }

    /** After issuing a request counted with {@link #track()}: a pending one needs the thread polling. */
    void issued(UcpRequest request) {
        if (sleeping && !request.isCompleted()) {
            worker.signal();
        }
    }

    /** Progresses on an application thread that busy-polls; false if nothing happened or the worker threw. */
    boolean pollFromApplication() {
        lastAppPoll = System.nanoTime();
        try {
            return progress() > 0;
        } catch (Exception e) {
            return false;
        }
    }

    private int progress() throws Exception {
        int n = worker.progress();
        if (n > 0 && !progressWatchers.isEmpty()) {
            for (Waiter w : progressWatchers) {
                w.wake();
            }
        }
        return n;
    }

    /**
     * Makes {@code w} woken whenever the worker made progress, until {@link #unwatchProgress}: for waits on
     * requests that take no callback (closing an endpoint).
     */
    void watchProgress(Waiter w) {
        progressWatchers.add(w);
    }

    void unwatchProgress(Waiter w) {
        progressWatchers.remove(w);
    }

    /** An application thread stopped polling: take over progress now rather than after the grace period. */
    void pollingEnded() {
        lastAppPoll = System.nanoTime() - APP_POLL_GRACE_NANOS;
        if (asideForApp) {
            LockSupport.unpark(thread);
        }
    }

    void end() {
        inflight.decrementAndGet();
    }

    void add(int id, UcxChannel ch) {
        channels.put(id, ch);
    }

    void remove(int id) {
        channels.remove(id);
    }

    synchronized void retain() {
        users++;
    }

    /** Drops one user; the last one stops the thread and destroys the worker. */
    void release() {
        synchronized (this) {
            if (--users > 0) {
                return;
            }
        }
        running = false;
        worker.signal();
        try {
            thread.join(TimeUnit.SECONDS.toMillis(5));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (thread.isAlive()) {
            LOG.warn("{} did not stop within 5 s; leaving its worker", thread.getName());
            return;
        }
        worker.close();
        UcxRuntime.release();
    }
}
