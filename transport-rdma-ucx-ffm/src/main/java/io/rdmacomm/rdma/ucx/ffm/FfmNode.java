package io.rdmacomm.rdma.ucx.ffm;

import io.rdmacomm.api.CommunicatorException;
import io.rdmacomm.rdma.spi.ChannelHandler;
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
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The process's UCX node: one UCP context, one thread-safe worker and one {@link Progress} thread shared by every
 * channel, server and client side, and the pool of {@link Op}s their operations run in. Reference counted: the
 * first channel or listener creates it, the last one closed destroys it.
 *
 * <p>Active messages: the header starts with the receiving channel's id (big-endian u32). Connecting through a
 * listener (today's SPI), the server speaks first, so that a client never has a request pending on an endpoint that
 * never got connected (libucp 1.13 then aborts in {@code ucp_worker_destroy}): on the connection request the server
 * sends {@code AM_ID} with its channel id to id 0, the node itself, with the reply flag, so the client's node learns
 * which of its endpoints it came through; the client answers {@code AM_ID} with its own id to the server's channel,
 * which is then handed to the engine. A channel connected to a peer's worker address ({@link #connect(FfmChannel,
 * byte[], int)}) knows the peer's id beforehand and needs neither.
 */
final class FfmNode {
    private static final Logger LOG = LoggerFactory.getLogger(FfmNode.class);
    static final int AM_ID = 2;
    static final int AM_CONTROL = 3;
    static final int AM_WRITE = 4;
    /** An eager write's header: receiver id, destination address, length; the notification follows. */
    static final int WRITE_HEADER = 4 + 8 + 4;
    private static final int OP_MEMORY = FfmChannel.MAX_MESSAGE + WRITE_HEADER;
    /**
     * Endpoints are created in UCX's default error mode, as the ucx-jucx provider's: in peer mode libucx 1.13 leaves
     * shared memory out of a same-host connection (tcp only, unless MM_ERROR_HANDLING=y, see the ucx-ffm README).
     * The error handler is installed either way, and a client/server endpoint reports a dead peer through its
     * connection manager's socket (the peer-death tests, both transports).
     */
    static final UcpEndpoint.ErrorMode ERROR_MODE = UcpEndpoint.ErrorMode.NONE;
    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    /** All of memory: libucp hands over raw addresses, read and copied without a segment per message. */
    private static final MemorySegment ALL = MemorySegment.NULL.reinterpret(Long.MAX_VALUE);

    private static FfmNode shared;
    private static int users;

    private final UcpContext context;
    private final UcpWorker worker;
    private final Arena arena = Arena.ofShared();
    private final ChannelTable channels = new ChannelTable();
    /** Client channels waiting for the server's id, by their endpoint's handle; and ids that came first. */
    private final Map<Long, FfmChannel> connecting = new HashMap<>();
    private final Map<Long, Integer> unclaimed = new HashMap<>();
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

    private FfmNode() {
        // mt_workers_shared: memory is mapped from application threads while the progress thread runs the worker
        context = UcpContext.create(EnumSet.of(UcpContext.Feature.AM, UcpContext.Feature.RMA,
                UcpContext.Feature.WAKEUP), Map.of(), true);
        try {
            worker = context.newWorker(UcpWorker.ThreadMode.MULTI);
            worker.setAmHandler(AM_ID, m -> route(AM_ID, m));
            worker.setAmHandler(AM_CONTROL, m -> route(AM_CONTROL, m));
            worker.setAmHandler(AM_WRITE, m -> route(AM_WRITE, m));
        } catch (RuntimeException e) {
            context.close();
            throw e;
        }
        progress = new Progress(worker, lock, this::drainDeferred);
    }

    /** The node, created on first use; every call is matched by one {@link #release()}. */
    static synchronized FfmNode acquire() throws IOException {
        if (shared == null) {
            try {
                shared = new FfmNode();
            } catch (RuntimeException e) {
                throw new CommunicatorException("UCX (ucx-ffm) could not start: " + e.getMessage(), e);
            }
            LOG.debug("ucx-ffm node started (libucp {})", io.rdmacomm.ucx.ffm.Ucx.version());
        }
        users++;
        return shared;
    }

    /** One more user of a node already held (a channel accepted by a listener). */
    void retain() {
        synchronized (FfmNode.class) {
            users++;
        }
    }

    /** Drops one user; the last one stops the progress thread and destroys worker and context. */
    void release() {
        synchronized (FfmNode.class) {
            if (--users > 0) {
                return;
            }
            shared = null;
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

    UcpWorker worker() {
        return worker;
    }

    // ---- channels --------------------------------------------------------------------------------------------

    /** A new channel under a new id, not connected yet; the caller owns one node reference for it. */
    FfmChannel newChannel(String peerName, ChannelHandler handler) throws IOException {
        FfmChannel ch = new FfmChannel(this, peerName, handler);
        channels.add(ch);
        return ch;
    }

    /** Forgets a closed channel and drops its node reference. */
    void remove(FfmChannel ch) {
        channels.remove(ch);
        release();
    }

    /**
     * Client side of today's SPI: an endpoint to a listener's socket address, then HELLO with this channel's id
     * until the server's id arrives. Takes over the caller's node reference (released on failure).
     */
    FfmChannel connect(InetSocketAddress peer, long deadline, ChannelHandler handler) throws IOException {
        String name = peer.getAddress().getHostAddress() + ":" + peer.getPort();
        FfmChannel ch;
        try {
            ch = newChannel(name, handler);
        } catch (IOException | RuntimeException e) {
            release();
            throw e;
        }
        try {
            lock.lock();
            try {
                ch.ep = worker.connect(peer, ERROR_MODE, ch.errorHandler());
            } finally {
                lock.unlock();
            }
            Integer early;
            synchronized (connecting) {
                early = unclaimed.remove(ch.ep.nativeHandle());
                if (early == null) {
                    connecting.put(ch.ep.nativeHandle(), ch);
                }
            }
            if (early != null) {
                ch.serverIdArrived(early);
            }
            IOException f = ch.awaitConnected(deadline);
            if (f != null) {
                throw refusedOrFailed(name, f);
            }
            return ch;
        } catch (IOException | RuntimeException e) {
            ch.close();
            if (e instanceof RuntimeException) {
                ConnectException ce = new ConnectException("UCX could not connect to " + name + ": " + e.getMessage());
                ce.initCause(e);
                throw ce;
            }
            throw e;
        }
    }

    /**
     * Connects a channel made by {@link #newChannel} to a peer channel whose node address ({@link #address()}) and
     * id came out of band: the endpoint is made from the worker address and messages are addressed at once, no id
     * exchange. This is SPI v2's {@code channel.connect(peerAddress, peerChannelId, role)}.
     */
    void connect(FfmChannel ch, byte[] peerAddress, int peerChannelId) throws IOException {
        RuntimeException failed = null;
        lock.lock();
        try {
            ch.ep = worker.connect(peerAddress, ERROR_MODE, ch.errorHandler());
        } catch (RuntimeException e) {
            failed = e;
        } finally {
            lock.unlock();
        }
        if (failed != null) {
            throw new CommunicatorException("UCX could not reach " + ch.peerName() + ": " + failed.getMessage(),
                    failed);
        }
        ch.connected(peerChannelId);
    }

    /** What a peer needs to reach this node ({@code ucp_worker_get_address}); SPI v2's {@code node.address()}. */
    byte[] address() {
        return worker.address();
    }

    private static IOException refusedOrFailed(String name, IOException f) {
        int status = f instanceof CommunicatorException c ? c.nativeStatus().orElse(0) : 0;
        // UCS_ERR_UNREACHABLE (-6), REJECTED (-23), NOT_CONNECTED (-24), CONNECTION_RESET (-25): nobody listens
        if (status == -6 || status == -23 || status == -24 || status == -25) {
            ConnectException ce = new ConnectException("connection refused by " + name + " (" + f.getMessage()
                    + ")");
            ce.initCause(f);
            return ce;
        }
        return f;
    }

    /** The server's id for a client channel, inside the worker's progress (a message to id 0). */
    private void onServerId(AmMessage m) {
        if (m.headerLength() != 8 || m.replyEndpointHandle() == 0) {
            LOG.warn("connection message without a reply endpoint ({} header bytes) dropped", m.headerLength());
            return;
        }
        long ep = m.replyEndpointHandle();
        int serverId = readInt(m.headerAddress() + 4);
        FfmChannel ch;
        synchronized (connecting) {
            ch = connecting.remove(ep);
            if (ch == null) {
                // the endpoint's creation has not returned to connect() yet
                unclaimed.put(ep, serverId);
            }
        }
        if (ch != null) {
            ch.serverIdArrived(serverId);
        }
    }

    /** Forgets what a closing channel's endpoint was waiting for. */
    void forgetConnecting(UcpEndpoint ep) {
        synchronized (connecting) {
            connecting.remove(ep.nativeHandle());
            unclaimed.remove(ep.nativeHandle());
        }
    }

    private void route(int amId, AmMessage m) {
        if (m.headerLength() < 4) {
            LOG.warn("active message {} without a receiver dropped", amId);
            return;
        }
        int receiver = readInt(m.headerAddress());
        if (receiver == 0 && amId == AM_ID) {
            onServerId(m);
            return;
        }
        FfmChannel ch = channels.get(receiver);
        if (ch == null || ch.isClosed()) {
            LOG.debug("active message {} for unknown channel {} dropped", amId, receiver);
            return;
        }
        switch (amId) {
            case AM_ID -> {
                if (m.headerLength() == 8) {
                    ch.peerIdArrived(readInt(m.headerAddress() + 4));
                }
            }
            case AM_CONTROL -> ch.onControl(m);
            default -> ch.onWrite(m);
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
        }
        progress.wake();
    }

    /** Delivers deferred messages, unless the calling thread is inside an operation; returns how many channels. */
    int drainDeferred() {
        if (insideOperation()) {
            return 0;
        }
        int n = 0;
        while (true) {
            FfmChannel ch;
            synchronized (deferredLock) {
                ch = withDeferred.poll();
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

    boolean pollFromApplication() {
        return progress.pollFromApplication();
    }

    void pollingEnded() {
        progress.pollingEnded();
    }

    /**
     * Closes an endpoint and waits, bounded and not cut short by an interrupt (a worker destroyed under a pending
     * close trips an assertion in libucp), progressing the worker meanwhile; a close still pending at the deadline
     * goes to the progress thread, which frees its request once done. Returns whether it completed in time.
     */
    boolean closeEndpoint(UcpEndpoint ep, UcpEndpoint.CloseMode mode, long timeoutNanos) {
        forgetConnecting(ep);
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
