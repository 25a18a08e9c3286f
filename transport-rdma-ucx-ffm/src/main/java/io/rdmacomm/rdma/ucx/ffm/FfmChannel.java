package io.rdmacomm.rdma.ucx.ffm;

import io.rdmacomm.api.CommunicatorException;
import io.rdmacomm.rdma.spi.ChannelHandler;
import io.rdmacomm.rdma.spi.Completion;
import io.rdmacomm.rdma.spi.LocalRegion;
import io.rdmacomm.rdma.spi.MappedRing;
import io.rdmacomm.rdma.spi.RemoteRegion;
import io.rdmacomm.rdma.ucx.SharedEndpoints;
import io.rdmacomm.rdma.ucx.UcxChannel;
import io.rdmacomm.rdma.ucx.UcxWire;
import io.rdmacomm.ucx.ffm.AmMessage;
import io.rdmacomm.ucx.ffm.UcpEndpoint;
import io.rdmacomm.ucx.ffm.UcpRemoteKey;
import io.rdmacomm.ucx.ffm.UcxException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A channel of an {@link FfmNode}, on the node's endpoint to the peer's worker (shared with the node's other channels
 * to that worker, closed by the last of them). Every call on the endpoint runs between
 * {@link #enter()} and {@link #exit()}; close marks the channel closed and waits until no call is inside before it
 * closes the endpoint, since libucp crashes (not fails) on an endpoint it has freed.
 */
final class FfmChannel extends UcxChannel<UcpEndpoint, FfmMemory> {
    private static final Logger LOG = LoggerFactory.getLogger(FfmChannel.class);
    private static final long CLOSE_WAIT_NANOS = TimeUnit.SECONDS.toNanos(2);
    private static final long CALLS_WAIT_NANOS = TimeUnit.SECONDS.toNanos(10);
    /** Control messages are sent eager (never rendezvous), so they arrive in order and are copied at once. */
    static final int MAX_MESSAGE = UcxWire.MAX_CONTROL;
    /** The most a worker address may have (the bootstrap's bound for node addresses). */
    private static final int MAX_NODE_ADDRESS = 4096;

    private final FfmNode node;
    /** Puts this process issued (a test's evidence that the one-sided path ran). */
    static final java.util.concurrent.atomic.LongAdder PUTS = new java.util.concurrent.atomic.LongAdder();
    private int id;
    private volatile SharedEndpoints.Shared<UcpEndpoint, FfmChannel> shared;
    private final Deferred deferred = new Deferred();
    private final Consumer<ByteBuffer> deliverNow = this::deliverNow;

    FfmChannel(FfmNode node, String peerName, ChannelHandler handler) {
        super(peerName, node.withheld(), new FfmMemory(node.context(), node.withheld()), handler);
        this.node = node;
    }

    void assignId(int id) {
        this.id = id;
    }

    int id() {
        return id;
    }

    FfmNode node() {
        return node;
    }

    // ---- connection ------------------------------------------------------------------------------------------

    @Override
    public int localId() {
        return id;
    }

    /**
     * Takes the node's endpoint to the peer's worker, made from its address on either side (UCX connects lazily,
     * on the first operation); {@code role} does not matter to UCX. Nothing of UCX is reachable before the engine's
     * bootstrap handed over the address.
     */
    @Override
    public void connect(byte[] peerAddress, int peerChannelId, Role role, long deadline) throws IOException {
        if (shared != null) {
            throw new IllegalStateException("the channel to " + peerName + " is connected already");
        }
        if (peerAddress.length == 0 || peerAddress.length > MAX_NODE_ADDRESS) {
            throw new CommunicatorException(peerName + " sent a " + peerAddress.length
                    + " byte worker address (1 to " + MAX_NODE_ADDRESS + " expected)");
        }
        if (isClosed()) {
            throw new CommunicatorException("the connection to " + peerName + " is closed");
        }
        shared = node.connect(this, peerAddress, peerChannelId);
    }

    /** The node's endpoint is ours now and messages go to {@code peerChannelId}. */
    void connected(UcpEndpoint endpoint, int peerChannelId) {
        remoteId(peerChannelId);
        ep = endpoint;
    }

    /** The shared endpoint failed, inside the worker's progress. */
    void endpointFailed(UcxException cause) {
        failConnection(new CommunicatorException("connection to " + peerName + " failed: " + cause.statusString()
                + " (UCX status " + cause.status() + ")", cause.status(), cause));
    }

    @Override
    protected void lockNode() {
        node.lock();
        FfmNode.enterOperation();
    }

    @Override
    protected void unlockNode() {
        FfmNode.exitOperation();
        node.unlock();
    }

    // ---- memory ----------------------------------------------------------------------------------------------

    @Override
    public MappedRing mapRemote(RemoteRegion region) {
        return memory.map(region, peerName);
    }

    // ---- operations ------------------------------------------------------------------------------------------

    @Override
    public void send(ByteBuffer message, Completion done) {
        int n = message.remaining();
        if (n > MAX_MESSAGE) {
            done.failed(new CommunicatorException(n + " byte message over the channel's " + MAX_MESSAGE));
            return;
        }
        Op op = node.op().start(this, Op.SEND, done, "send");
        // absolute bulk copy: a duplicate() per message was the one allocation of the round trip
        op.view(4 + n).putInt(remoteId()).put(4, message, message.position(), n);
        am(op, UcxWire.AM_CONTROL, op.address, 4, op.address + 4, n, UcpEndpoint.AM_EAGER);
    }

    @Override
    public void write(LocalRegion src, long srcAddress, RemoteRegion dst, long dstAddress, int length,
            ByteBuffer notification, Completion done) {
        int noteLength = notification == null ? 0 : notification.remaining();
        if (noteLength > MAX_MESSAGE) {
            done.failed(new CommunicatorException(noteLength + " byte notification over the channel's "
                    + MAX_MESSAGE));
            return;
        }
        UcpRemoteKey key = FfmMemory.key(dst);
        if (eager || key == null) {
            Op op = node.op().start(this, Op.EAGER_WRITE, done, "write");
            ByteBuffer h = op.view(UcxWire.WRITE_HEADER + noteLength).putInt(remoteId()).putLong(dstAddress)
                    .putInt(length);
            if (notification != null) {
                h.put(UcxWire.WRITE_HEADER, notification, notification.position(), noteLength);
            }
            am(op, UcxWire.AM_WRITE, op.address, UcxWire.WRITE_HEADER + noteLength, srcAddress, length, 0);
            return;
        }
        Op op = node.op().start(this, Op.PUT, done, "write");
        if (notification != null) {
            op.view(4 + noteLength).putInt(remoteId()).put(4, notification, notification.position(), noteLength);
            op.noteLength = noteLength;
        }
        if (!enter()) {
            op.fail(refusal());
            return;
        }
        try {
            ep.put(srcAddress, length, dstAddress, key, op.request);
            PUTS.increment();
        } catch (RuntimeException e) {
            op.fail(new CommunicatorException("put to " + peerName + " failed: " + e.getMessage(), e));
            return;
        } finally {
            exit();
        }
        node.track(op);
    }

    @Override
    public void read(RemoteRegion src, long srcAddress, LocalRegion dst, long dstAddress, int length,
            Completion done) {
        UcpRemoteKey key = FfmMemory.key(src);
        if (key == null) {
            refuseWithheldRead(src, done);
            return;
        }
        Op op = node.op().start(this, Op.GET, done, "read");
        if (!enter()) {
            op.fail(refusal());
            return;
        }
        try {
            ep.get(dstAddress, length, srcAddress, key, op.request);
        } catch (RuntimeException e) {
            op.fail(new CommunicatorException("get from " + peerName + " failed: " + e.getMessage(), e));
            return;
        } finally {
            exit();
        }
        node.track(op);
    }

    /** The notification of a put write, once its flush completed. */
    void sendNote(Op op) {
        am(op, UcxWire.AM_CONTROL, op.address, 4, op.address + 4, op.noteLength, UcpEndpoint.AM_EAGER);
    }

    void flush(Op op) {
        if (!enter()) {
            op.fail(refusal());
            return;
        }
        try {
            ep.flush(op.request);
        } catch (RuntimeException e) {
            op.fail(new CommunicatorException("flush to " + peerName + " failed: " + e.getMessage(), e));
            return;
        } finally {
            exit();
        }
        node.track(op);
    }

    private void am(Op op, int amId, long header, int headerLength, long data, long dataLength, int flags) {
        IOException refused = refusal();
        if (refused != null || !enter()) {
            op.fail(refused != null ? refused : refusal());
            return;
        }
        try {
            ep.amSend(amId, header, headerLength, data, dataLength, flags, op.request);
        } catch (RuntimeException e) {
            op.fail(new CommunicatorException(op.what + " to " + peerName + " failed: " + e.getMessage(), e));
            return;
        } finally {
            exit();
        }
        node.track(op);
    }

    // ---- events (inside the worker's progress) ---------------------------------------------------------------

    /** A control message: copied out of UCX's buffer at once (sent eager, so never a rendezvous descriptor). */
    void onControl(AmMessage m) {
        if (m.isRendezvous() || m.dataLength() > MAX_MESSAGE) {
            failConnection(new CommunicatorException(peerName + " sent a " + m.dataLength()
                    + " byte control message, over " + MAX_MESSAGE));
            return;
        }
        deliver(node.inbound(m.dataAddress(), (int) m.dataLength()));
    }

    /** A write carried in an active message: checked against this side's regions, placed, then notified. */
    void onWrite(AmMessage m) {
        long h = m.headerAddress();
        long dst = FfmNode.readLong(h + UcxWire.WRITE_ADDRESS);
        int length = FfmNode.readInt(h + UcxWire.WRITE_LENGTH);
        int noteLength = (int) m.headerLength() - UcxWire.WRITE_HEADER;
        if (m.dataLength() != length || noteLength < 0 || noteLength > MAX_MESSAGE
                || !memory.acceptsWrite(dst, length)) {
            failConnection(new CommunicatorException(peerName + " wrote " + length + " bytes at 0x"
                    + Long.toHexString(dst) + " outside any region registered for remote write"));
            return;
        }
        if (!m.isRendezvous()) {
            FfmNode.copy(m.dataAddress(), dst, length);
            if (noteLength > 0) {
                deliver(node.inbound(h + UcxWire.WRITE_HEADER, noteLength));
            }
            return;
        }
        Op op = node.op().start(this, Op.RECEIVE_WRITE, null, "receiving a write");
        op.noteLength = noteLength;
        FfmNode.copy(h + UcxWire.WRITE_HEADER, op.address, noteLength);
        try {
            m.receiveData(dst, length, op.request);
        } catch (RuntimeException e) {
            op.fail(new CommunicatorException("receiving a write from " + peerName + " failed: " + e.getMessage(),
                    e));
            return;
        }
        node.track(op);
    }

    /** Hands a message to the handler (now, or deferred: see {@link Deferred}), unless the channel was closed. */
    void deliver(ByteBuffer message) {
        if (deferred.offerIfBacklogged(message, FfmNode.insideOperation())) {
            node.deferred(this);
            return;
        }
        deliverNow(message);
    }

    /** Delivers deferred messages; by a thread polling the node, outside any operation. */
    void drainDeferred() {
        deferred.drain(deliverNow);
    }

    // ---- close -----------------------------------------------------------------------------------------------

    @Override
    public void close() {
        if (!markClosed()) {
            return;
        }
        boolean idle = awaitNoCalls(CALLS_WAIT_NANOS);
        if (!idle) {
            // closing under a running call crashes the process in libucp: leave the endpoint to the worker's end
            LOG.warn("a call on the endpoint to {} did not return within {} ms: the endpoint stays open", peerName,
                    TimeUnit.NANOSECONDS.toMillis(CALLS_WAIT_NANOS));
        }
        if (idle) {
            memory.releaseRemotes();
        }
        UcpEndpoint e = ep;
        SharedEndpoints.Shared<UcpEndpoint, FfmChannel> s = shared;
        if (e != null && idle && node.release(s, this)) {
            // a flush-close of an endpoint that cannot flush (never connected, peer gone) would stay pending
            UcpEndpoint.CloseMode mode = !failed() && remoteId() >= 0 ? UcpEndpoint.CloseMode.FLUSH
                    : UcpEndpoint.CloseMode.FORCE;
            if (!node.closeEndpoint(e, mode, CLOSE_WAIT_NANOS)) {
                LOG.warn("closing the endpoint to {} did not complete within {} ms", peerName,
                        TimeUnit.NANOSECONDS.toMillis(CLOSE_WAIT_NANOS));
            }
        }
        if (idle) {
            memory.releaseRegions();
        }
        node.remove(this);
    }
}
