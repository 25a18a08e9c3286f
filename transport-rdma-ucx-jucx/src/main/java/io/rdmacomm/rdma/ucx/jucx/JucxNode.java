package io.rdmacomm.rdma.ucx.jucx;

import io.rdmacomm.api.support.Waiter;
import io.rdmacomm.rdma.spi.ChannelHandler;
import io.rdmacomm.rdma.spi.RdmaChannel;
import io.rdmacomm.rdma.ucx.SharedEndpoints;
import io.rdmacomm.rdma.ucx.SharedEndpointsNode;
import io.rdmacomm.rdma.ucx.UcxProgress;
import io.rdmacomm.rdma.ucx.UcxTransports;
import io.rdmacomm.rdma.ucx.UcxWire;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;
import org.openucx.jucx.UcxUtils;
import org.openucx.jucx.ucp.UcpAmData;
import org.openucx.jucx.ucp.UcpContext;
import org.openucx.jucx.ucp.UcpEndpoint;
import org.openucx.jucx.ucp.UcpRequest;
import org.openucx.jucx.ucp.UcpWorker;
import org.openucx.jucx.ucp.UcpWorkerParams;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The provider's node: a UCP context and thread-safe worker restricted to one interface's devices, and the thread
 * that progresses the worker, sleeping in {@code ucp_worker_wait} when idle so one-sided operations and control
 * messages complete while the application does not call in. Shared by every connection of the process on that
 * interface, server and client side (reference counted by {@link JucxProvider#node}); active messages are routed
 * to channels by the receiver id in their header.
 */
final class JucxNode implements SharedEndpointsNode {
    private static final Logger LOG = LoggerFactory.getLogger(JucxNode.class);

    final UcpContext context;
    final UcpWorker worker;
    private final byte[] address;
    /** The endpoints to peer workers, shared by this node's channels. */
    final SharedEndpoints<UcpEndpoint, JucxChannel> endpoints;
    private final Loop progressThread;
    /** Ends an application thread's wait in the worker at its deadline; removed before the worker goes. */
    private final WaitDeadlines.Entry deadline;
    private final Map<Integer, JucxChannel> channels = new ConcurrentHashMap<>();
    private final AtomicInteger ids = new AtomicInteger(1);
    /** Whether one-sided access is withheld from peers: writes are active messages, gets are the engine's. */
    private final boolean eager;
    /** Called by each {@link #close()}; true once the last user left. */
    private final BooleanSupplier lastUserLeft;
    /** Whether an application thread is inside {@link #poll()}. */
    private final AtomicBoolean appPolling = new AtomicBoolean();
    /** UCX requests not completed yet: while any exists the thread polls, since pending sends get no wakeup. */
    private final AtomicInteger inflight = new AtomicInteger();
    private final List<Waiter> progressWatchers = new CopyOnWriteArrayList<>();
    /**
     * Held around every call into UCX that can run callbacks or contend for the worker (progress, sends, puts,
     * gets, flushes, endpoint creation and close): in thread-safe mode libucp guards the worker with a spinlock, and
     * 64 connections' threads spinning on it starved the one holding it on 2 cores (the contract kit's 64 peers on
     * UCX_TLS=tcp missed their 50 s, thread dumps full of threads RUNNABLE in sendAmNonBlockingNative). Waiting here
     * parks instead. Callbacks run with it held, so a send from a callback re-enters it.
     */
    private final ReentrantLock lock = new ReentrantLock();

    /**
     * A node for {@code side}'s connections on {@code netDevices} (UCX_NET_DEVICES; null: UCX's choice), giving
     * peers one-sided access on every transport with {@code trustPeers} (oneSided=trusted); {@code lastUserLeft}
     * counts its users down (see {@link io.rdmacomm.rdma.ucx.NodeRegistry}).
     */
    JucxNode(String netDevices, RdmaChannel.Role side, boolean trustPeers, BooleanSupplier lastUserLeft) {
        this.lastUserLeft = lastUserLeft;
        this.eager = UcxTransports.oneSidedWithheld(trustPeers);
        context = JucxRuntime.newContext(netDevices, eager);
        UcpWorker w;
        try {
            w = context.newWorker(new UcpWorkerParams().requestThreadSafety().requestWakeupRMA()
                    .requestWakeupTX().requestWakeupRX());
        } catch (RuntimeException e) {
            context.close();
            throw e;
        }
        worker = w;
        endpoints = new SharedEndpoints<>(this::newEndpoint);
        ByteBuffer a = worker.getAddress();
        address = new byte[a.remaining()];
        a.get(address);
        worker.setAmRecvHandler(UcxWire.AM_CONTROL, (h, hs, d, ep) -> onAm(UcxWire.AM_CONTROL, h, hs, d));
        worker.setAmRecvHandler(UcxWire.AM_WRITE, (h, hs, d, ep) -> onAm(UcxWire.AM_WRITE, h, hs, d));
        deadline = WaitDeadlines.add(worker::signal);
        progressThread = newLoop("rdmacomm-rdma-progress-ucx-" + (side == RdmaChannel.Role.ACTIVE ? "client"
                : "server") + (netDevices == null ? "" : "-" + netDevices));
    }

    /** The progress thread, or, if it cannot be made, no deadline entry left behind. */
    private Loop newLoop(String name) {
        try {
            return new Loop(name);
        } catch (RuntimeException | Error e) {
            WaitDeadlines.remove(deadline);
            throw e;
        }
    }

    /** The node's progress thread ({@link UcxProgress}): a round is one progress of the worker. */
    private final class Loop extends UcxProgress {
        Loop(String name) {
            start(name);
        }

        @Override
        protected int progressRound() throws Exception {
            return progress();
        }

        /** UCX requests not completed yet: pending sends get no wake-up event. */
        @Override
        protected boolean pending() {
            return inflight.get() > 0;
        }

        @Override
        protected boolean nothingToDo() throws Exception {
            return progress() == 0 && inflight.get() == 0;
        }

        @Override
        protected void waitForEvents() {
            worker.waitForEvents();
        }

        @Override
        protected void signal() {
            worker.signal();
        }

        @Override
        protected int applicationRound() throws Exception {
            return progress();
        }

        /** {@code ucp_worker_wait}, untimed in JUCX: the node's {@link WaitDeadlines} entry ends it in time. */
        @Override
        protected void sleepInPlace(long nanos, BooleanSupplier until) {
            deadline.arm(System.nanoTime() + nanos);
            try {
                if (!until.getAsBoolean() && running()) {
                    worker.waitForEvents();
                }
            } finally {
                deadline.disarm();
            }
        }
    }

    @Override
    public UcxProgress progressThread() {
        return progressThread;
    }

    /** The endpoint to a peer worker, shared by this node's channels to it; its error fails them all. */
    private UcpEndpoint newEndpoint(byte[] address, SharedEndpoints.Shared<UcpEndpoint, JucxChannel> shared) {
        ByteBuffer direct = ByteBuffer.allocateDirect(address.length).put(address).flip();
        lock.lock();
        try {
            return worker.newEndpoint(JucxRuntime.endpointParams().setUcpAddress(direct)
                    .setErrorHandler((ep, status, message) -> {
                        shared.failed();
                        for (JucxChannel c : shared.users()) {
                            c.onEpError(ep, status, message);
                        }
                    }).setName("rdmacomm"));
        } finally {
            lock.unlock();
        }
    }

    private int onAm(int type, long headerAddress, long headerSize, UcpAmData data) {
        ByteBuffer header = UcxUtils.getByteBufferView(headerAddress, headerSize).order(ByteOrder.BIG_ENDIAN);
        int receiver = header.getInt(0);
        JucxChannel ch = channels.get(receiver);
        if (ch == null) {
            // a channel is known before its peer can name it, so this is a message that crossed the channel's close
            // (the peer's last control message, a heartbeat) or a forged one: either is harmless to drop, and a WARN
            // per message would let a peer flood the log (DEBUG, as on ucx-ffm)
            LOG.debug("active message for unknown channel {} dropped ({} header bytes, {} data bytes)", receiver,
                    headerSize, data.getLength());
            return 0;
        }
        ch.onAm(type, header, data);
        return 0;
    }

    /** An operation was issued: poll until {@link #end()}, and wake the thread if it sleeps. */
    void begin() {
        inflight.incrementAndGet();
        progressThread.wakeIfSleeping();
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
        if (!request.isCompleted()) {
            progressThread.wakeIfSleeping(); // the progress thread, or an application thread waiting in its place
        }
    }

    @Override
    public SharedEndpoints<?, ?> endpoints() {
        return endpoints;
    }

    @Override
    public byte[] address() {
        return address.clone();
    }

    @Override
    public RdmaChannel newChannel(String peerName, ChannelHandler handler) {
        int id = ids.getAndIncrement();
        JucxChannel ch = new JucxChannel(this, id, peerName, eager);
        ch.handler(handler);
        channels.put(id, ch);
        return ch;
    }

    /**
     * Progresses on an application thread that busy-polls; false if nothing happened, the worker threw, or another
     * application thread is polling already: the worker is shared by every connection of the process, and many
     * threads spinning on its lock (UCX's spinlock) starved each other on a small machine (64 concurrent peers in
     * one process did not finish their exchanges within 50 s).
     */
    @Override
    public boolean poll() {
        progressThread.applicationPolled();
        if (!appPolling.compareAndSet(false, true)) {
            return false;
        }
        try {
            return progress() > 0;
        } catch (Exception e) {
            return false;
        } finally {
            appPolling.set(false);
        }
    }

    private int progress() throws Exception {
        int n;
        lock.lock();
        try {
            n = worker.progress();
        } finally {
            lock.unlock();
        }
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

    void lock() {
        lock.lock();
    }

    void unlock() {
        lock.unlock();
    }

    void end() {
        inflight.decrementAndGet();
    }

    void remove(int id) {
        channels.remove(id);
    }

    /** Drops one user; the last one stops the thread and destroys the worker and context. */
    @Override
    public void close() {
        if (!lastUserLeft.getAsBoolean()) {
            return;
        }
        if (!channels.isEmpty()) {
            LOG.warn("{} released with {} channels open", progressThread.threadName(), channels.size());
        }
        if (!progressThread.stop()) {
            LOG.warn("{} did not stop within 5 s; leaving its worker", progressThread.threadName());
            return;
        }
        WaitDeadlines.remove(deadline);
        worker.close();
        context.close();
    }
}
