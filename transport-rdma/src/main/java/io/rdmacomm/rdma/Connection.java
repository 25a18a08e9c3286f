package io.rdmacomm.rdma;

import io.rdmacomm.api.Access;
import io.rdmacomm.api.CommunicatorException;
import io.rdmacomm.api.Endpoint;
import io.rdmacomm.api.HandshakeException;
import io.rdmacomm.api.MemoryRegion;
import io.rdmacomm.api.RegionDescriptor;
import io.rdmacomm.api.support.AbstractCommunicator;
import io.rdmacomm.api.support.Liveness;
import io.rdmacomm.rdma.spi.ChannelHandler;
import io.rdmacomm.rdma.spi.RdmaChannel;
import io.rdmacomm.rdma.spi.RdmaNode;
import java.io.IOException;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.SocketChannel;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The stream protocol engine for one connection, on any {@link RdmaChannel}: the handshake, the dispatch of the
 * peer's messages to the connection's parts, and close. The parts: the {@link Receiver} (receive ring, credits,
 * adverts and zero-copy arrivals), the {@link Sender} (staging, the peer's ring, direct and zero-copy writes) and
 * {@link PeerMemory} (one-sided remote memory), sharing a {@link ConnectionState}.
 *
 * <p>Each side registers a receive ring and sends its descriptor in the HELLO. Ring data and zero-copy data are
 * both tied to stream positions, so exactly one of them fills any position and a stale advert is never used.
 * Notifications may arrive out of order; the reader orders them by stream position.
 */
final class Connection implements ChannelHandler, AbstractCommunicator.Link {
    static {
        Wire.preload();
    }

    private static final Logger LOG = LoggerFactory.getLogger(Connection.class);
    private static final long CLOSE_FLUSH_DEFAULT_NANOS = TimeUnit.SECONDS.toNanos(3);

    private final ConnectionState state;
    private final Receiver receiver;
    private final Sender sender;
    private final PeerMemory memory;
    private final AtomicBoolean closing = new AtomicBoolean();
    private volatile RdmaNode node;
    private volatile SocketChannel socket;
    private volatile boolean socketWatched;
    private volatile ByteBuffer peerHello;
    private volatile boolean closeAcked;
    /** Counts the peer's messages after its HELLO, for the liveness thread; written by the provider's thread. */
    private volatile long received;
    private final ByteBuffer heartbeat = ByteBuffer.allocate(HeartbeatMessage.LENGTH);
    private volatile Liveness.Watching liveness;
    private final BooleanSupplier helloOrFailure = this::helloArrived;
    private final BooleanSupplier closeAckedOrFailure;

    Connection(Endpoint endpoint) {
        this.state = new ConnectionState(endpoint);
        this.receiver = new Receiver(state);
        state.onEvents(receiver::tellIfReadable);
        state.onPollingEnded(receiver::stopSharedPolling);
        this.sender = new Sender(state);
        this.memory = new PeerMemory(state);
        this.closeAckedOrFailure = () -> closeAcked || state.failure() != null;
    }

    /** Takes the provider channel whose handler this connection is, on {@code node} (one reference, released by close). */
    void attach(RdmaChannel ch, RdmaNode node) {
        this.node = node;
        state.attach(ch, node);
    }

    /** The bootstrap socket, closed with the connection. */
    void bootstrapSocket(SocketChannel socket) {
        this.socket = socket;
    }

    /** From now on the end of the bootstrap socket fails the connection (see {@link #onLost}). */
    void watchBootstrapSocket() throws IOException {
        BootstrapWatch.get().watch(socket, peerName(), this::onLost);
        socketWatched = true;
    }

    /** Both sides use {@code size} for their receive rings, as agreed in the bootstrap. */
    void agreeRingSize(int size) {
        state.ringSize = size;
    }

    /** The bootstrap socket ended: the peer is gone unless it closed the stream first (then the socket's end follows). */
    void onLost(IOException cause) {
        if (!state.peerClosed()) {
            state.fail(cause);
        }
    }

    @Override
    public String peerName() {
        return state.peerName();
    }

    long registeredBytes() {
        return state.budget.used();
    }

    /** Whether this side writes into the peer's ring mapped into this process. */
    boolean peerRingMapped() {
        return sender.ringMapped();
    }

    /** Bytes this side wrote straight into the peer's advertised buffers. */
    long zeroCopyBytes() {
        return sender.zeroCopyBytes();
    }

    // ---- handshake -------------------------------------------------------------------------------------------

    /** Client side: registers the ring, sends HELLO, waits for the peer's and validates it. */
    void clientHandshake(long deadline) throws IOException {
        receiver.setUp();
        sendHello();
        state.waiter.await(helloOrFailure, deadline, "handshake (connectTimeout)");
        if (peerHello == null) {
            throw new CommunicatorException("handshake with " + peerName() + " at " + state.endpoint + " failed: "
                    + state.failure().getMessage(), state.failure());
        }
        RegionDescriptor ring = agreedRing(HelloMessage.ring(peerHello, peerName() + " (" + state.endpoint + ")"));
        try {
            sender.setUp(ring);
        } catch (Sender.PeerRingUnreachable e) {
            // e.g. UCX on shared memory failing to attach the segment of a ring the server freed as it closed the
            // connection: UCX's status ("Shared memory error") would leave the user guessing
            throw new CommunicatorException("handshake with " + peerName() + " at " + state.endpoint
                    + " failed: the receive ring its HELLO named is out of reach (the server freed it if it closed"
                    + " the connection during the handshake or ended): " + e.getCause().getMessage(), e);
        }
        established();
    }

    /** Makes {@code w} (waking the server's bootstrap thread) run on this connection's events, or none if null. */
    void watch(Runnable w) {
        state.watch(w);
    }

    /** The peer's ring, if it has the size both sides agreed on in the bootstrap. */
    private RegionDescriptor agreedRing(RegionDescriptor ring) throws HandshakeException {
        if (ring.length() != state.ringSize) {
            throw new HandshakeException("handshake from " + peerName() + ": a receive ring of " + ring.length()
                    + " bytes, not the " + state.ringSize + " agreed in the bootstrap");
        }
        return ring;
    }

    boolean helloArrived() {
        return peerHello != null || state.failure() != null;
    }

    /** Server side, once {@link #helloArrived()}: validates the client's HELLO, then replies with ours. */
    void serverHandshake() throws IOException {
        if (peerHello == null) {
            throw new CommunicatorException("connection from " + peerName() + " failed before its handshake: "
                    + state.failure().getMessage(), state.failure());
        }
        RegionDescriptor peerRing = agreedRing(HelloMessage.ring(peerHello, peerName()));
        receiver.setUp();
        sender.setUp(peerRing);
        sendHello();
        established();
    }

    private void sendHello() {
        RegionDescriptor ring = receiver.ringDescriptor();
        state.send(HelloMessage.encode(ByteBuffer.allocate(HelloMessage.length(ring)), ring,
                Liveness.heartbeatPeriod(state.livenessNanos)));
    }

    /** The handshake is done: heartbeats start when both sides asked for them (a liveness on each side). */
    private void established() {
        state.established();
        long peerHeartbeat = HelloMessage.heartbeat(peerHello);
        if (state.livenessNanos > 0 && peerHeartbeat > 0) {
            liveness = Liveness.watch(new Watched(), state.livenessNanos, peerHeartbeat);
            if (closing.get()) {
                liveness.close();
            }
        }
    }

    /** This connection as the liveness thread sees it. */
    private final class Watched implements Liveness.Peer {
        @Override
        public long received() {
            // a writer into our ring while the polling flag is up sends no DATA: what it published counts as heard,
            // taken or not
            return received + receiver.sharedPublished();
        }

        @Override
        public long sent() {
            return sender.calls() + state.controlSent();
        }

        @Override
        public void heartbeat() {
            if (state.failure() == null && !state.isClosed()) {
                state.send(HeartbeatMessage.encode(heartbeat));
            }
        }

        @Override
        public void silent(SocketTimeoutException cause) {
            LOG.warn("{}: {}", state.endpoint, cause.getMessage());
            state.fail(cause);
        }

        @Override
        public String peerName() {
            return state.peerName();
        }
    }

    // ---- stream and remote memory --------------------------------------------------------------------------------

    @Override
    public int read(ByteBuffer dst) throws IOException {
        return receiver.read(dst);
    }

    @Override
    public int available() throws IOException {
        return receiver.available();
    }

    @Override
    public boolean notifyReadable(Runnable listener) {
        return receiver.notifyReadable(listener);
    }

    @Override
    public boolean busyPoll(long nanos, BooleanSupplier until) {
        return receiver.busyPoll(nanos, until);
    }

    @Override
    public boolean canBlockingPoll() {
        return state.canWait();
    }

    @Override
    public boolean blockingPoll(long nanos, BooleanSupplier until) {
        return receiver.blockingPoll(nanos, until);
    }

    @Override
    public void wakeBlockingPoll() {
        state.wakeWaiter();
    }

    @Override
    public void write(ByteBuffer src) throws IOException {
        sender.write(src);
    }

    @Override
    public int tryWrite(ByteBuffer src) throws IOException {
        return sender.tryWrite(src);
    }

    @Override
    public long tryWrite(ByteBuffer[] srcs, int offset, int length) throws IOException {
        return sender.tryWrite(srcs, offset, length);
    }

    @Override
    public void sync() throws IOException {
        sender.sync();
    }

    @Override
    public MemoryRegion register(ByteBuffer buffer, Set<Access> access) throws IOException {
        return memory.register(buffer, access);
    }

    @Override
    public void put(ByteBuffer src, RegionDescriptor remote, long offset) throws IOException {
        memory.put(src, remote, offset);
    }

    @Override
    public void get(RegionDescriptor remote, long offset, ByteBuffer dst) throws IOException {
        memory.get(remote, offset, dst);
    }

    // ---- events ----------------------------------------------------------------------------------------------

    @Override
    public void onMessage(ByteBuffer message) {
        if (peerHello == null) {
            peerHello = ByteBuffer.allocate(message.remaining()).put(message.duplicate()).flip();
            state.wake();
            return;
        }
        received++; // one writer, the provider's thread
        // messages are read by absolute index in big-endian order: a buffer of another order is viewed anew
        ByteBuffer m = message.order() == ByteOrder.BIG_ENDIAN ? message : message.duplicate();
        try {
            dispatch(m);
        } catch (MalformedMessageException e) {
            state.fail(new CommunicatorException("malformed message " + e.typeName() + " from " + peerName() + ": "
                    + e.getMessage() + " (" + Wire.describe(m) + ")"));
        }
    }

    /** Hands one message to the part it is for; the provider may reuse {@code m} once this returns. */
    private void dispatch(ByteBuffer m) throws MalformedMessageException {
        byte type = Wire.type(m);
        switch (type) {
            case DataMessage.DATA, DataMessage.DATA_INLINE -> receiver.onData(m);
            case CreditMessage.TYPE -> {
                CreditMessage.check(m);
                sender.onCredit(CreditMessage.ringConsumed(m));
            }
            case AdvertMessage.TYPE -> sender.onAdvert(AdvertMessage.decode(m));
            case ZeroCopyDataMessage.TYPE -> receiver.onZeroCopyData(m);
            case CancelMessage.CANCEL -> {
                CancelMessage.check(m);
                int seq = CancelMessage.seq(m);
                if (sender.onCancel(seq)) {
                    state.send(CancelMessage.encode(ByteBuffer.allocate(CancelMessage.LENGTH),
                            CancelMessage.CANCEL_ACK, seq));
                }
            }
            case CancelMessage.CANCEL_ACK -> {
                CancelMessage.check(m);
                receiver.onCancelAck(CancelMessage.seq(m));
            }
            case CloseMessage.TYPE -> {
                CloseMessage.check(m);
                state.peerClosedAt(CloseMessage.finalPosition(m));
                state.send(AckMessage.encode(ByteBuffer.allocate(AckMessage.LENGTH), CloseMessage.TYPE, 0));
            }
            case AnnounceMessage.TYPE -> memory.onAnnounce(AnnounceMessage.decode(m));
            case RevokeMessage.TYPE -> {
                RevokeMessage.check(m);
                memory.onRevoke(RevokeMessage.regionId(m));
            }
            case AckMessage.TYPE -> {
                AckMessage.check(m);
                if (AckMessage.acknowledged(m) == CloseMessage.TYPE) {
                    closeAcked = true;
                } else {
                    memory.onAck(AckMessage.acknowledged(m), AckMessage.regionId(m));
                }
            }
            case GetRequestMessage.TYPE -> memory.onGetRequest(GetRequestMessage.decode(m));
            case GetDoneMessage.TYPE -> memory.onGetDone(GetDoneMessage.decode(m));
            case PutPlacedMessage.TYPE -> {
                PutPlacedMessage.check(m);
                state.send(AckMessage.encode(ByteBuffer.allocate(AckMessage.LENGTH), PutPlacedMessage.TYPE,
                        PutPlacedMessage.seq(m)));
            }
            case HeartbeatMessage.TYPE -> {
                HeartbeatMessage.check(m);
                return; // counted on arrival; it changes nothing a waiter waits for
            }
            default -> throw new MalformedMessageException(type, "unknown message type " + type);
        }
        state.wake();
    }

    @Override
    public void onError(IOException cause) {
        state.fail(cause);
    }

    // ---- close -----------------------------------------------------------------------------------------------

    /**
     * Closes the connection: unless a writer is active, first delivers staged bytes and announces the end of the
     * stream (bounded by the read timeout, or a few seconds), then releases the channel and every registration.
     */
    @Override
    public void close() {
        if (!closing.compareAndSet(false, true)) {
            return;
        }
        Liveness.Watching w = liveness;
        if (w != null) {
            w.close();
        }
        RdmaChannel ch = state.channel();
        // a peer that sent CLOSE has closed its whole side and reads nothing more: no CLOSE of ours to wait for
        if (state.isEstablished() && !sender.isWriting() && state.failure() == null && !state.peerClosed()) {
            try {
                long bound = state.readTimeoutNanos > 0 ? state.readTimeoutNanos : CLOSE_FLUSH_DEFAULT_NANOS;
                long deadline = System.nanoTime() + bound;
                long finalPosition = sender.drain(deadline);
                if (state.failure() == null) {
                    state.send(CloseMessage.encode(ByteBuffer.allocate(CloseMessage.LENGTH), finalPosition));
                    // UCX tells the peer of a closed endpoint on another path than the messages (the connection
                    // manager's socket vs the shared-memory FIFO), so the end of the connection could overtake
                    // the last messages: close the channel only once the peer has processed CLOSE
                    state.waiter.await(closeAckedOrFailure, deadline, "close (waiting for the peer)");
                }
            } catch (IOException | RuntimeException e) {
                LOG.debug("{}: bytes not delivered before close: {}", state.endpoint, e.toString());
            }
        }
        state.markClosed();
        receiver.awaitReadsLeft(CLOSE_FLUSH_DEFAULT_NANOS);
        if (ch != null) {
            ch.close();
        }
        closeSocket();
        memory.releaseAll();
        sender.release();
        RegistrationCache cache = state.cache();
        if (cache != null) {
            cache.close();
        }
        receiver.release();
        RdmaNode n = node;
        if (n != null) {
            n.close();
        }
    }

    private void closeSocket() {
        SocketChannel s = socket;
        if (s == null) {
            return;
        }
        if (socketWatched) {
            BootstrapWatch.get().unwatch(s);
            return;
        }
        try {
            s.close();
        } catch (IOException e) {
            LOG.debug("{}: closing the bootstrap socket: {}", state.endpoint, e.toString());
        }
    }
}
