package io.rdmacomm.rdma.ucx.ffm;

import io.rdmacomm.rdma.spi.ChannelHandler;
import io.rdmacomm.rdma.spi.RdmaChannel;
import io.rdmacomm.rdma.ucx.SharedEndpoints;
import io.rdmacomm.rdma.ucx.SharedEndpointsNode;
import io.rdmacomm.rdma.ucx.UcxProgress;
import io.rdmacomm.rdma.ucx.UcxTransports;
import io.rdmacomm.rdma.ucx.UcxWire;
import io.rdmacomm.ucx.ffm.AmMessage;
import io.rdmacomm.ucx.ffm.UcpContext;
import io.rdmacomm.ucx.ffm.UcpEndpoint;
import io.rdmacomm.ucx.ffm.UcpWorker;
import io.rdmacomm.ucx.ffm.UcxException;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.ConnectException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A UCX node of the process: one UCP context (on the bootstrap interface's devices), one thread-safe worker and one
 * {@link Progress} thread shared by every channel of one side (client or server) on one interface, and the pool of
 * {@link Op}s their operations run in. Handed out and reference counted by {@link FfmProvider}.
 *
 * <p>Active messages: the header starts with the receiving channel's id (big-endian u32), which the engine's
 * bootstrap exchanged together with the nodes' worker addresses. Endpoints are made from worker addresses, one per
 * peer worker ({@link SharedEndpoints}); UCX's listener and connection manager are not used.
 */
final class FfmNode implements SharedEndpointsNode {
    private static final Logger LOG = LoggerFactory.getLogger(FfmNode.class);
    private static final int OP_MEMORY = FfmChannel.MAX_MESSAGE + UcxWire.WRITE_HEADER;
    /**
     * Endpoints are created in UCX's default error mode, as the ucx-jucx provider's: in peer mode libucx 1.13 leaves
     * shared memory out of a same-host connection (tcp only, unless MM_ERROR_HANDLING=y, see the ucx-ffm README).
     * The error handler is installed either way; a dead peer is detected by the engine's bootstrap socket (the
     * peer-death tests, both transports).
     */
    static final UcpEndpoint.ErrorMode ERROR_MODE = UcpEndpoint.ErrorMode.NONE;
    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    /** All of memory: libucp hands over raw addresses, read and copied without a segment per message. */
    private static final MemorySegment ALL = MemorySegment.NULL.reinterpret(Long.MAX_VALUE);

    private final UcpContext context;
    /**
     * Whether this node withholds one-sided access from its peers ({@link UcxTransports#oneSidedWithheld(boolean)}):
     * false on an RDMA device's rc/dc/ud only, or for endpoints that say oneSided=trusted.
     */
    private final boolean withheld;
    private final UcpWorker worker;
    private final Arena arena = Arena.ofShared();
    private final ChannelTable channels = new ChannelTable();
    /** The endpoints to peer workers, shared by this node's channels. */
    private final SharedEndpoints<UcpEndpoint, FfmChannel> endpoints = new SharedEndpoints<>(this::newEndpoint);
    private final byte[] address;
    /** Called by each {@link #close()}; true once the last user left. */
    private final BooleanSupplier lastUserLeft;
    private final Object poolLock = new Object();
    private Op[] pool = new Op[64];
    private int pooled;
    /** Where messages delivered inside a callback are copied; UCX runs a worker's callbacks one at a time. */
    private final ByteBuffer inbound = ByteBuffer.allocateDirect(FfmChannel.MAX_MESSAGE);
    private final MemorySegment inboundSegment = MemorySegment.ofBuffer(inbound);
    private final Progress progress;
    /**
     * Held around every call that can run callbacks (progress, sends, puts, flushes, closes): libucp's own lock in
     * MULTI mode spins, and on a small machine a few dozen threads spinning on it starved each other for seconds
     * (64 peers on UCX_TLS=tcp). Waiting here parks instead. A callback runs with it held, so a send from a
     * callback re-enters it and never waits for it while holding libucp's lock.
     */
    private final ReentrantLock lock = new ReentrantLock();
    /** Per thread: how many endpoint operations it is inside (see {@link Deferred}). */
    private static final ThreadLocal<int[]> OPERATIONS = ThreadLocal.withInitial(() -> new int[1]);
    private final Object deferredLock = new Object();
    private final ArrayDeque<FfmChannel> withDeferred = new ArrayDeque<>();
    /** Whether withDeferred may be non-empty: polls look at it without taking deferredLock. */
    private volatile boolean anyDeferred;

    /**
     * A node on {@code netDevices} (UCX_NET_DEVICES; null: UCX's choice) for {@code side}'s channels;
     * {@code lastUserLeft} counts its users down (see {@link io.rdmacomm.rdma.ucx.NodeRegistry}).
     */
    FfmNode(String netDevices, RdmaChannel.Role side, boolean trustPeers, BooleanSupplier lastUserLeft) {
        this.lastUserLeft = lastUserLeft;
        this.withheld = UcxTransports.oneSidedWithheld(trustPeers);
        // mt_workers_shared: memory is mapped from application threads while the progress thread runs the worker
        // no RMA where one-sided access is withheld from peers: UCP's software put/get handlers are not installed
        EnumSet<UcpContext.Feature> features = EnumSet.of(UcpContext.Feature.AM, UcpContext.Feature.WAKEUP);
        if (!withheld) {
            features.add(UcpContext.Feature.RMA);
        }
        context = UcpContext.create(features, UcxTransports.contextConfig(netDevices, withheld), true);
        try {
            worker = context.newWorker(UcpWorker.ThreadMode.MULTI);
            worker.setAmHandler(UcxWire.AM_CONTROL, m -> route(UcxWire.AM_CONTROL, m));
            worker.setAmHandler(UcxWire.AM_WRITE, m -> route(UcxWire.AM_WRITE, m));
            address = worker.address();
        } catch (RuntimeException e) {
            context.close();
            throw e;
        }
        progress = new Progress(worker, lock, this::drainDeferred, "rdmacomm-rdma-progress-ffm-"
                + (side == RdmaChannel.Role.ACTIVE ? "client" : "server") + (netDevices == null ? "" : "-" + netDevices));
        LOG.debug("ucx-ffm node started (libucp {}, devices {}, one-sided access {})",
                io.rdmacomm.ucx.ffm.Ucx.version(), netDevices == null ? "UCX's choice" : netDevices,
                withheld ? "withheld" : trustPeers && UcxTransports.oneSidedWithheld() ? "trusted" : "checked");
    }

    /** Drops one user; the last one stops the progress thread and destroys worker and context. */
    @Override
    public void close() {
        if (!lastUserLeft.getAsBoolean()) {
            return;
        }
        if (!progress.stop()) {
            LOG.warn("the ucx-ffm progress thread did not stop within 5 s; leaving its worker");
            return;
        }
        worker.close();
        context.close();
        arena.close();
    }

    UcpContext context() {
        return context;
    }

    /** Whether this node withholds one-sided access from its peers: its channels write with active messages. */
    boolean withheld() {
        return withheld;
    }

    UcpWorker worker() {
        return worker;
    }

    // ---- channels --------------------------------------------------------------------------------------------

    @Override
    public FfmChannel newChannel(String peerName, ChannelHandler handler) throws IOException {
        FfmChannel ch = new FfmChannel(this, peerName, handler);
        channels.add(ch);
        return ch;
    }

    /** Forgets a closed channel. */
    void remove(FfmChannel ch) {
        channels.remove(ch);
    }

    /**
     * Gives {@code ch} the node's endpoint to the peer worker at {@code peerAddress} (made on first use) and
     * addresses its messages to {@code peerChannelId}. The node lock is taken first: an endpoint's error callback
     * runs under it, so the lock order is node lock, then the endpoints' monitor.
     */
    SharedEndpoints.Shared<UcpEndpoint, FfmChannel> connect(FfmChannel ch, byte[] peerAddress, int peerChannelId)
            throws IOException {
        SharedEndpoints.Shared<UcpEndpoint, FfmChannel> shared;
        lock.lock();
        try {
            shared = endpoints.acquire(peerAddress, ch);
        } catch (RuntimeException e) {
            ConnectException ce = new ConnectException("UCX could not reach the worker of " + ch.peerName() + ": "
                    + e.getMessage());
            ce.initCause(e);
            throw ce;
        } finally {
            lock.unlock();
        }
        ch.connected(shared.endpoint(), peerChannelId);
        return shared;
    }

    /** {@code ch} leaves its endpoint; true if it was the last channel on it, and the caller closes it. */
    boolean release(SharedEndpoints.Shared<UcpEndpoint, FfmChannel> shared, FfmChannel ch) {
        return endpoints.release(shared, ch);
    }

    /** The endpoint to a peer worker, with the node lock held; its error fails every channel on it. */
    private UcpEndpoint newEndpoint(byte[] peerAddress, SharedEndpoints.Shared<UcpEndpoint, FfmChannel> shared) {
        return worker.connect(peerAddress, ERROR_MODE, (endpoint, cause) -> {
            shared.failed();
            for (FfmChannel c : shared.users()) {
                c.endpointFailed(cause);
            }
        });
    }

    @Override
    public SharedEndpoints<?, ?> endpoints() {
        return endpoints;
    }

    @Override
    public byte[] address() {
        return address.clone();
    }

    private void route(int amId, AmMessage m) {
        if (m.headerLength() < 4) {
            LOG.warn("active message {} without a receiver dropped", amId);
            return;
        }
        int receiver = readInt(m.headerAddress());
        FfmChannel ch = channels.get(receiver);
        if (ch == null || ch.isClosed()) {
            LOG.debug("active message {} for unknown channel {} dropped", amId, receiver);
            return;
        }
        if (amId == UcxWire.AM_CONTROL) {
            ch.onControl(m);
        } else {
            ch.onWrite(m);
        }
    }

    void lock() {
        lock.lock();
    }

    void unlock() {
        lock.unlock();
    }

    static void enterOperation() {
        OPERATIONS.get()[0]++;
    }

    static void exitOperation() {
        OPERATIONS.get()[0]--;
    }

    static boolean insideOperation() {
        return OPERATIONS.get()[0] > 0;
    }

    /** {@code ch} has deferred messages: the next poll of the node delivers them. */
    void deferred(FfmChannel ch) {
        synchronized (deferredLock) {
            if (!withDeferred.contains(ch)) {
                withDeferred.add(ch);
            }
            anyDeferred = true;
        }
        progress.wake();
    }

    /** Delivers deferred messages, unless the calling thread is inside an operation; returns how many channels. */
    int drainDeferred() {
        if (!anyDeferred || insideOperation()) {
            return 0;
        }
        int n = 0;
        while (true) {
            FfmChannel ch;
            synchronized (deferredLock) {
                ch = withDeferred.poll();
                if (ch == null) {
                    anyDeferred = false;
                }
            }
            if (ch == null) {
                return n;
            }
            ch.drainDeferred();
            n++;
        }
    }

    /** A copy of {@code length} bytes at {@code address} in the shared inbound buffer: only inside a callback. */
    ByteBuffer inbound(long address, int length) {
        MemorySegment.copy(ALL, address, inboundSegment, 0, length);
        return inbound.clear().limit(length);
    }

    static int readInt(long address) {
        return ALL.get(INT, address);
    }

    static long readLong(long address) {
        return ALL.get(LONG, address);
    }

    static void copy(long from, long to, long length) {
        MemorySegment.copy(ALL, from, ALL, to, length);
    }

    // ---- operations ------------------------------------------------------------------------------------------

    /** A free op (pooled; a new one if all are in flight). */
    Op op() {
        synchronized (poolLock) {
            if (pooled > 0) {
                Op op = pool[--pooled];
                pool[pooled] = null;
                return op;
            }
        }
        return new Op(this, worker.newRequest(), arena.allocate(OP_MEMORY, 8));
    }

    void recycle(Op op) {
        op.reset();
        synchronized (poolLock) {
            if (pooled == pool.length) {
                pool = Arrays.copyOf(pool, pooled * 2);
            }
            pool[pooled++] = op;
        }
    }

    /** After issuing: the next stage now if libucp finished inside the call, else the progress thread polls it. */
    void track(Op op) {
        if (op.request.isDone()) {
            op.advance();
        } else {
            progress.pend(op);
        }
    }

    @Override
    public boolean poll() {
        return progress.pollFromApplication();
    }

    @Override
    public UcxProgress progressThread() {
        return progress;
    }

    /**
     * Closes an endpoint and waits, bounded and not cut short by an interrupt (a worker destroyed under a pending
     * close trips an assertion in libucp), progressing the worker meanwhile; a close still pending at the deadline
     * goes to the progress thread, which frees its request once done. Returns whether it completed in time.
     */
    boolean closeEndpoint(UcpEndpoint ep, UcpEndpoint.CloseMode mode, long timeoutNanos) {
        Op op = op();
        op.stage = Op.CLOSE;
        lock.lock();
        try {
            ep.close(mode, op.request);
        } catch (RuntimeException e) {
            LOG.debug("closing an endpoint: {}", e.toString());
            recycle(op);
            return true;
        } finally {
            lock.unlock();
        }
        long deadline = System.nanoTime() + timeoutNanos;
        while (!op.request.isDone()) {
            if (System.nanoTime() - deadline > 0) {
                progress.pend(op);
                return false;
            }
            if (lock.tryLock()) {
                try {
                    worker.progress();
                } finally {
                    lock.unlock();
                }
            }
            Thread.onSpinWait();
        }
        recycle(op);
        return true;
    }
}
