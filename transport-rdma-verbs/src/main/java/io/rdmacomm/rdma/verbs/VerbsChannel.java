package io.rdmacomm.rdma.verbs;

import com.ibm.disni.verbs.IbvMr;
import com.ibm.disni.verbs.IbvRecvWR;
import com.ibm.disni.verbs.IbvSendWR;
import com.ibm.disni.verbs.IbvSge;
import com.ibm.disni.verbs.IbvWC.IbvWcStatus;
import com.ibm.disni.verbs.IbvWC;
import com.ibm.disni.verbs.SVCPollCq;
import com.ibm.disni.verbs.SVCPostRecv;
import com.ibm.disni.verbs.SVCPostSend;
import com.ibm.disni.verbs.StatefulVerbCall;
import io.rdmacomm.api.Access;
import io.rdmacomm.api.CommunicatorException;
import io.rdmacomm.api.RegionDescriptor;
import io.rdmacomm.api.RemoteAccessException;
import io.rdmacomm.rdma.spi.ChannelHandler;
import io.rdmacomm.rdma.spi.Completion;
import io.rdmacomm.rdma.spi.LocalRegion;
import io.rdmacomm.rdma.spi.RdmaChannel;
import io.rdmacomm.rdma.spi.RemoteRegion;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.AsynchronousCloseException;
import java.nio.channels.ClosedChannelException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.LinkedList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One RC queue pair as an {@link RdmaChannel}.
 *
 * <p>Control messages are SENDs from registered send slots into receive slots the peer pre-posted; each frame
 * starts with a 4-byte header (type, reserved, credits returned, big-endian). A sender spends one credit per frame
 * and keeps the last credit for credit-only frames, so the two sides can always return credits to each other and
 * a receive is always posted when a SEND arrives (no RNR). A write with a notification is one post of two work
 * requests, an unsignalled RDMA WRITE and a signalled SEND of the notification: on an RC queue pair the
 * notification's receive completes only after the write's data is placed (IBTA o9-20), which is the guarantee the
 * SPI asks for. DiSNI's stateful calls are built once per connection and only their modifiable fields (wr_id,
 * flags, SGE, remote address, rkey) change per operation.
 *
 * <p>Operations that do not fit (no credit, no free slot) queue in order and go out as completions free
 * resources. Handlers and completions are never called with this channel's lock held.
 */
final class VerbsChannel implements RdmaChannel {
    private static final Logger LOG = LoggerFactory.getLogger(VerbsChannel.class);

    static final int HEADER_BYTES = 4;
    static final byte TYPE_MESSAGE = 1;
    static final byte TYPE_CREDIT = 2;

    // wr_id layout: slot index in the low 32 bits, kind in bits 32-33, bit 34 set on the unsignalled head of a chain.
    static final long KIND_RECV = 1L << 32;
    static final long KIND_SEND = 2L << 32;
    static final long KIND_RDMA = 3L << 32;
    static final long KIND_MASK = 3L << 32;
    static final long CHAIN_HEAD = 1L << 34;

    private static final int SUCCESS = IbvWcStatus.IBV_WC_SUCCESS.ordinal();
    private static final int FLUSHED = IbvWcStatus.IBV_WC_WR_FLUSH_ERR.ordinal();
    private static final int REMOTE_ACCESS = IbvWcStatus.IBV_WC_REM_ACCESS_ERR.ordinal();
    private static final int RETRY_EXCEEDED = IbvWcStatus.IBV_WC_RETRY_EXC_ERR.ordinal();
    private static final int POLL_BATCH = 16;
    static final int AWAIT_MILLIS = 50;
    private static final long CLOSE_FLUSH_NANOS = TimeUnit.SECONDS.toNanos(1);
    private static final Completion NOTHING = new Completion() {
        @Override
        public void completed() {
        }

        @Override
        public void failed(IOException cause) {
        }
    };

    private final Verbs verbs;
    private final String peer;
    private final Settings settings;
    private final Runnable onClosed;
    private final ByteBuffer slots;
    private final long slotsAddress;
    private final IbvMr slotsMr;
    private final ByteBuffer[] messageViews;
    private final SVCPostRecv[] recvPosts;
    private final SVCPostSend sendPost;
    private final SVCPostSend writePost;
    private final SVCPostSend notifiedWritePost;
    private final SVCPostSend readPost;
    private final IbvWC[] wcs;
    private final SVCPollCq poll;

    // Guarded by this.
    private final Completion[] sendDone;
    private final Completion[] rdmaDone;
    private final boolean[] rdmaIsRead;
    private final int[] freeSend;
    private int freeSendCount;
    private final int[] freeRdma;
    private int freeRdmaCount;
    private int credits;
    private int unreturned;
    private final ArrayDeque<Pending> pending = new ArrayDeque<>();
    private final Set<Local> regions = new LinkedHashSet<>();
    private IOException failure;
    private boolean errorReported;
    private boolean closed;
    private boolean tornDown;
    private Thread progress;

    private volatile ChannelHandler handler;
    private volatile boolean stopping;
    private volatile boolean teardownByLoop;

    /**
     * Registers the slot buffers, builds the stateful calls and pre-posts every receive. On failure everything
     * made here is released again; {@code verbs} itself stays with the caller.
     */
    VerbsChannel(Verbs verbs, String peer, Settings settings, ChannelHandler handler, Runnable onClosed)
            throws IOException {
        this.verbs = verbs;
        this.peer = peer;
        this.settings = settings;
        this.handler = handler;
        this.onClosed = onClosed;
        int slotCount = settings.recvSlots() + settings.sendSlots();
        this.slots = ByteBuffer.allocateDirect(slotCount * settings.slotSize()).order(ByteOrder.BIG_ENDIAN);
        this.slotsAddress = verbs.address(slots);
        this.sendDone = new Completion[settings.sendSlots()];
        this.rdmaDone = new Completion[settings.rdmaSlots()];
        this.rdmaIsRead = new boolean[settings.rdmaSlots()];
        this.freeSend = new int[settings.sendSlots()];
        for (int i = 0; i < freeSend.length; i++) {
            freeSend[freeSendCount++] = freeSend.length - 1 - i;
        }
        this.freeRdma = new int[settings.rdmaSlots()];
        for (int i = 0; i < freeRdma.length; i++) {
            freeRdma[freeRdmaCount++] = freeRdma.length - 1 - i;
        }
        this.credits = settings.recvSlots();
        this.messageViews = new ByteBuffer[settings.recvSlots()];
        this.recvPosts = new SVCPostRecv[settings.recvSlots()];
        this.wcs = new IbvWC[POLL_BATCH];
        for (int i = 0; i < wcs.length; i++) {
            wcs[i] = new IbvWC();
        }
        List<StatefulVerbCall<?>> made = new ArrayList<>();
        IbvMr mr = null;
        try {
            mr = verbs.register(slotsAddress, slots.capacity(), IbvMr.IBV_ACCESS_LOCAL_WRITE);
            int lkey = mr.getLkey();
            for (int i = 0; i < recvPosts.length; i++) {
                messageViews[i] = slots.slice(i * settings.slotSize(), settings.slotSize()).asReadOnlyBuffer();
                recvPosts[i] = verbs.postRecv(List.of(recvWr(KIND_RECV | i, slotAddress(i), settings.slotSize(),
                        lkey)));
                made.add(recvPosts[i]);
            }
            this.sendPost = verbs.postSend(List.of(sendWr(IbvSendWR.IBV_WR_SEND, IbvSendWR.IBV_SEND_SIGNALED, lkey)));
            made.add(sendPost);
            this.writePost = verbs.postSend(List.of(sendWr(IbvSendWR.IBV_WR_RDMA_WRITE,
                    IbvSendWR.IBV_SEND_SIGNALED, 0)));
            made.add(writePost);
            this.notifiedWritePost = verbs.postSend(List.of(sendWr(IbvSendWR.IBV_WR_RDMA_WRITE, 0, 0),
                    sendWr(IbvSendWR.IBV_WR_SEND, IbvSendWR.IBV_SEND_SIGNALED, lkey)));
            made.add(notifiedWritePost);
            this.readPost = verbs.postSend(List.of(sendWr(IbvSendWR.IBV_WR_RDMA_READ, IbvSendWR.IBV_SEND_SIGNALED,
                    0)));
            made.add(readPost);
            this.poll = verbs.pollCq(wcs);
            made.add(poll);
            for (SVCPostRecv r : recvPosts) {
                r.execute();
            }
        } catch (IOException | RuntimeException e) {
            for (StatefulVerbCall<?> call : made) {
                call.free();
            }
            if (mr != null) {
                deregisterQuietly(mr);
            }
            throw e;
        }
        this.slotsMr = mr;
    }

    private static IbvRecvWR recvWr(long wrId, long address, int length, int lkey) {
        IbvRecvWR wr = new IbvRecvWR();
        wr.setWr_id(wrId);
        LinkedList<IbvSge> sges = new LinkedList<>();
        sges.add(sge(address, length, lkey));
        wr.setSg_list(sges);
        return wr;
    }

    private static IbvSendWR sendWr(int opcode, int flags, int lkey) {
        IbvSendWR wr = new IbvSendWR();
        wr.setOpcode(opcode);
        wr.setSend_flags(flags);
        LinkedList<IbvSge> sges = new LinkedList<>();
        sges.add(sge(0, 0, lkey));
        wr.setSg_list(sges);
        return wr;
    }

    private static IbvSge sge(long address, int length, int lkey) {
        IbvSge sge = new IbvSge();
        sge.setAddr(address);
        sge.setLength(length);
        sge.setLkey(lkey);
        return sge;
    }

    private long slotAddress(int slot) {
        return slotsAddress + (long) slot * settings.slotSize();
    }

    private int sendSlotOffset(int sendSlot) {
        return (settings.recvSlots() + sendSlot) * settings.slotSize();
    }

    /** Sets the handler of a channel accepted by a listener, whose handler is known only after the connection. */
    void handler(ChannelHandler h) {
        this.handler = h;
    }

    /** Starts the progress thread; completions are delivered from then on. */
    synchronized void start() {
        if (progress == null && !closed) {
            progress = new Thread(this::progressLoop, "rdmacomm-rdma-verbs-progress");
            progress.setDaemon(true);
            progress.start();
        }
    }

    @Override
    public String peerName() {
        return peer;
    }

    @Override
    public int maxMessageSize() {
        return settings.slotSize() - HEADER_BYTES;
    }

    @Override
    public boolean poll() {
        return false;
    }

    // ---- memory ------------------------------------------------------------------------------------------------

    @Override
    public LocalRegion register(ByteBuffer buffer, Set<Access> access) throws IOException {
        if (!buffer.isDirect()) {
            throw new IllegalArgumentException("the verbs provider registers direct buffers only, got " + buffer);
        }
        int length = buffer.capacity();
        if (length == 0) {
            throw new IllegalArgumentException("cannot register an empty buffer");
        }
        int flags = IbvMr.IBV_ACCESS_LOCAL_WRITE;
        if (access.contains(Access.REMOTE_WRITE)) {
            flags |= IbvMr.IBV_ACCESS_REMOTE_WRITE;
        }
        if (access.contains(Access.REMOTE_READ)) {
            flags |= IbvMr.IBV_ACCESS_REMOTE_READ;
        }
        synchronized (this) {
            if (closed) {
                throw new ClosedChannelException();
            }
        }
        // Registration pins pages and can take long for large buffers: not under the lock operations need.
        long address = verbs.address(buffer);
        IbvMr mr = verbs.register(address, length, flags);
        Local region = new Local(this, buffer, mr, address, length, access);
        synchronized (this) {
            if (!closed) {
                regions.add(region);
                return region;
            }
        }
        deregisterQuietly(mr);
        throw new ClosedChannelException();
    }

    private void deregister(Local region) {
        synchronized (this) {
            if (!regions.remove(region) || tornDown) {
                return;
            }
        }
        deregisterQuietly(region.mr);
    }

    private void deregisterQuietly(IbvMr mr) {
        try {
            verbs.deregister(mr);
        } catch (IOException | RuntimeException e) {
            LOG.warn("deregistering memory of the connection to {} failed: {}", peer, e.toString());
        }
    }

    @Override
    public RemoteRegion unpack(RegionDescriptor descriptor) throws IOException {
        byte[] key = descriptor.key();
        if (key.length != 4) {
            throw new CommunicatorException("descriptor " + descriptor + " carries a " + key.length + "-byte key,"
                    + " a verbs rkey has 4 bytes (was it packed by another provider?)");
        }
        return new Remote(descriptor, ByteBuffer.wrap(key).getInt());
    }

    // ---- operations --------------------------------------------------------------------------------------------

    @Override
    public void send(ByteBuffer message, Completion done) {
        int length = message.remaining();
        IOException refused = null;
        List<Runnable> after = new ArrayList<>(0);
        synchronized (this) {
            refused = refusal();
            if (refused == null && length > maxMessageSize()) {
                refused = new CommunicatorException("control message of " + length + " bytes to " + peer
                        + " exceeds the verbs provider's maximum of " + maxMessageSize());
            }
            if (refused == null) {
                if (pending.isEmpty() && canSendFrame()) {
                    refused = postFrame(TYPE_MESSAGE, message, done, after);
                } else {
                    pending.add(Pending.message(copy(message), done));
                }
            }
        }
        finish(refused, done, after);
    }

    @Override
    public void write(LocalRegion src, long srcAddress, RemoteRegion dst, long dstAddress, int length,
            ByteBuffer notification, Completion done) {
        IOException invalid = check(src, srcAddress, dst, dstAddress, length, Access.REMOTE_WRITE);
        if (invalid == null && notification != null && notification.remaining() > maxMessageSize()) {
            invalid = new CommunicatorException("notification of " + notification.remaining() + " bytes to " + peer
                    + " exceeds the verbs provider's maximum of " + maxMessageSize());
        }
        if (invalid != null) {
            done.failed(invalid);
            return;
        }
        if (length == 0) {
            if (notification == null) {
                done.completed();
            } else {
                send(notification, done);
            }
            return;
        }
        Local local = (Local) src;
        Remote remote = (Remote) dst;
        IOException refused;
        List<Runnable> after = new ArrayList<>(0);
        synchronized (this) {
            refused = refusal();
            if (refused == null) {
                boolean fits = notification == null ? freeRdmaCount > 0 : canSendFrame();
                if (pending.isEmpty() && fits) {
                    refused = notification == null
                            ? postRdma(writePost, false, srcAddress, local.mr.getLkey(), length, dstAddress,
                                    remote.rkey, done, after)
                            : postNotifiedWrite(srcAddress, local.mr.getLkey(), length, dstAddress, remote.rkey,
                                    notification, done, after);
                } else {
                    pending.add(Pending.write(local, srcAddress, remote, dstAddress, length,
                            notification == null ? null : copy(notification), done));
                }
            }
        }
        finish(refused, done, after);
    }

    @Override
    public void read(RemoteRegion src, long srcAddress, LocalRegion dst, long dstAddress, int length,
            Completion done) {
        IOException invalid = check(dst, dstAddress, src, srcAddress, length, Access.REMOTE_READ);
        if (invalid != null) {
            done.failed(invalid);
            return;
        }
        if (length == 0) {
            done.completed();
            return;
        }
        Local local = (Local) dst;
        Remote remote = (Remote) src;
        IOException refused;
        List<Runnable> after = new ArrayList<>(0);
        synchronized (this) {
            refused = refusal();
            if (refused == null) {
                if (pending.isEmpty() && freeRdmaCount > 0) {
                    refused = postRdma(readPost, true, dstAddress, local.mr.getLkey(), length, srcAddress,
                            remote.rkey, done, after);
                } else {
                    pending.add(Pending.read(local, dstAddress, remote, srcAddress, length, done));
                }
            }
        }
        finish(refused, done, after);
    }

    /**
     * Checks what the local side can check before posting: the HCA would catch a bad remote range too, but as a
     * remote access error that moves the queue pair to the error state and ends the connection.
     */
    private IOException check(LocalRegion local, long localAddress, RemoteRegion remote, long remoteAddress,
            int length, Access needed) {
        if (!(local instanceof Local l) || l.channel != this) {
            return new CommunicatorException("local region " + local + " was not registered on this verbs"
                    + " connection to " + peer);
        }
        if (!(remote instanceof Remote r)) {
            return new CommunicatorException("remote region " + remote + " was not unpacked by the verbs provider");
        }
        if (length < 0 || localAddress < l.address || localAddress - l.address > l.length - length) {
            return new CommunicatorException(length + " bytes at 0x" + Long.toHexString(localAddress)
                    + " are outside local region " + l.descriptor() + " (connection to " + peer + ")");
        }
        if (l.isClosed()) {
            return new CommunicatorException("local region " + l.descriptor() + " was deregistered");
        }
        try {
            r.descriptor.checkAccess(remoteAddress - r.descriptor.address(), length, needed);
        } catch (RemoteAccessException e) {
            return e;
        }
        return null;
    }

    private boolean canSendFrame() {
        return freeSendCount > 0 && credits > 1;
    }

    private IOException refusal() {
        if (closed) {
            return new ClosedChannelException();
        }
        if (failure != null) {
            return new CommunicatorException("the verbs connection to " + peer + " has failed: "
                    + failure.getMessage(), failure);
        }
        return null;
    }

    private void finish(IOException refused, Completion done, List<Runnable> after) {
        if (refused != null) {
            done.failed(refused);
        }
        for (Runnable r : after) {
            r.run();
        }
    }

    private static byte[] copy(ByteBuffer b) {
        byte[] bytes = new byte[b.remaining()];
        b.get(b.position(), bytes);
        return bytes;
    }

    // ---- posting (all with the lock held) ------------------------------------------------------------------------

    /** Copies a frame into a free send slot; returns its length. Spends a credit and returns ours. */
    private int fillSendSlot(int slot, byte type, ByteBuffer payload) {
        int offset = sendSlotOffset(slot);
        int length = payload == null ? 0 : payload.remaining();
        slots.put(offset, type);
        slots.put(offset + 1, (byte) 0);
        slots.putShort(offset + 2, (short) unreturned);
        if (length > 0) {
            slots.put(offset + HEADER_BYTES, payload, payload.position(), length);
        }
        unreturned = 0;
        credits--;
        return HEADER_BYTES + length;
    }

    private IOException postFrame(byte type, ByteBuffer payload, Completion done, List<Runnable> after) {
        int slot = freeSend[--freeSendCount];
        int length = fillSendSlot(slot, type, payload);
        sendDone[slot] = done;
        try {
            SVCPostSend.SendWRMod wr = sendPost.getWrMod(0);
            wr.setWr_id(KIND_SEND | slot);
            SVCPostSend.SgeMod sge = wr.getSgeMod(0);
            sge.setAddr(slotsAddressOfSend(slot));
            sge.setLength(length);
            sendPost.execute();
            return null;
        } catch (IOException | RuntimeException e) {
            sendDone[slot] = null;
            freeSend[freeSendCount++] = slot;
            return postFailed("send", e, after);
        }
    }

    private long slotsAddressOfSend(int slot) {
        return slotsAddress + sendSlotOffset(slot);
    }

    private IOException postNotifiedWrite(long localAddress, int lkey, int length, long remoteAddress, int rkey,
            ByteBuffer notification, Completion done, List<Runnable> after) {
        int slot = freeSend[--freeSendCount];
        int frameLength = fillSendSlot(slot, TYPE_MESSAGE, notification);
        sendDone[slot] = done;
        try {
            SVCPostSend.SendWRMod write = notifiedWritePost.getWrMod(0);
            write.setWr_id(KIND_SEND | CHAIN_HEAD | slot);
            SVCPostSend.SgeMod data = write.getSgeMod(0);
            data.setAddr(localAddress);
            data.setLength(length);
            data.setLkey(lkey);
            write.getRdmaMod().setRemote_addr(remoteAddress);
            write.getRdmaMod().setRkey(rkey);
            SVCPostSend.SendWRMod send = notifiedWritePost.getWrMod(1);
            send.setWr_id(KIND_SEND | slot);
            SVCPostSend.SgeMod frame = send.getSgeMod(0);
            frame.setAddr(slotsAddressOfSend(slot));
            frame.setLength(frameLength);
            notifiedWritePost.execute();
            return null;
        } catch (IOException | RuntimeException e) {
            sendDone[slot] = null;
            freeSend[freeSendCount++] = slot;
            return postFailed("notified write", e, after);
        }
    }

    private IOException postRdma(SVCPostSend call, boolean isRead, long localAddress, int lkey, int length,
            long remoteAddress, int rkey, Completion done, List<Runnable> after) {
        int slot = freeRdma[--freeRdmaCount];
        rdmaDone[slot] = done;
        rdmaIsRead[slot] = isRead;
        try {
            SVCPostSend.SendWRMod wr = call.getWrMod(0);
            wr.setWr_id(KIND_RDMA | slot);
            SVCPostSend.SgeMod sge = wr.getSgeMod(0);
            sge.setAddr(localAddress);
            sge.setLength(length);
            sge.setLkey(lkey);
            wr.getRdmaMod().setRemote_addr(remoteAddress);
            wr.getRdmaMod().setRkey(rkey);
            call.execute();
            return null;
        } catch (IOException | RuntimeException e) {
            rdmaDone[slot] = null;
            freeRdma[freeRdmaCount++] = slot;
            return postFailed(isRead ? "RDMA read" : "RDMA write", e, after);
        }
    }

    private IOException postFailed(String what, Exception e, List<Runnable> after) {
        CommunicatorException cause = new CommunicatorException("posting a " + what + " to " + peer + " failed: "
                + e.getMessage(), e);
        failLocked(cause, after);
        return cause;
    }

    /** Posts queued operations while resources allow, then returns credits if enough have accumulated. */
    private void drainLocked(List<Runnable> after) {
        while (!pending.isEmpty() && failure == null && !closed) {
            Pending p = pending.peek();
            boolean fits = p.kind == Pending.MESSAGE || p.bytes != null ? canSendFrame() : freeRdmaCount > 0;
            if (!fits) {
                break;
            }
            // Off the queue before posting: a failed post fails the queue, and this one must fail only once.
            pending.poll();
            IOException refused;
            if (p.kind == Pending.MESSAGE) {
                refused = postFrame(TYPE_MESSAGE, ByteBuffer.wrap(p.bytes), p.done, after);
            } else if (p.bytes != null) {
                refused = postNotifiedWrite(p.localAddress, p.local.mr.getLkey(), p.length, p.remoteAddress,
                        p.remote.rkey, ByteBuffer.wrap(p.bytes), p.done, after);
            } else {
                refused = postRdma(p.kind == Pending.READ ? readPost : writePost, p.kind == Pending.READ,
                        p.localAddress, p.local.mr.getLkey(), p.length, p.remoteAddress, p.remote.rkey, p.done,
                        after);
            }
            if (refused != null) {
                Completion d = p.done;
                after.add(() -> d.failed(refused));
            }
        }
        if (unreturned >= settings.recvSlots() / 2 && freeSendCount > 0 && credits >= 1 && failure == null
                && !closed) {
            postFrame(TYPE_CREDIT, null, NOTHING, after);
        }
    }

    // ---- completions -----------------------------------------------------------------------------------------

    /** Polls the completion queue once and handles what it returned; returns the number of completions. */
    int progressOnce() throws IOException {
        int n = poll.execute().getPolls();
        for (int i = 0; i < n; i++) {
            handle(wcs[i]);
        }
        if (n > 0) {
            synchronized (this) {
                notifyAll();
            }
        }
        return n;
    }

    private void handle(IbvWC wc) {
        long id = wc.getWr_id();
        int slot = (int) id;
        long kind = id & KIND_MASK;
        List<Runnable> after = new ArrayList<>(0);
        if (kind == KIND_RECV) {
            received(slot, wc, after);
        } else {
            synchronized (this) {
                if (kind == KIND_SEND) {
                    sendCompleted(slot, (id & CHAIN_HEAD) != 0, wc, after);
                } else if (kind == KIND_RDMA) {
                    rdmaCompleted(slot, wc, after);
                } else {
                    failLocked(new CommunicatorException("completion with unknown wr_id 0x" + Long.toHexString(id)
                            + " on the connection to " + peer), after);
                }
                drainLocked(after);
            }
        }
        for (Runnable r : after) {
            r.run();
        }
    }

    private void received(int slot, IbvWC wc, List<Runnable> after) {
        if (wc.getStatus() != SUCCESS) {
            if (wc.getStatus() != FLUSHED) {
                synchronized (this) {
                    failLocked(completionError("receive", wc), after);
                }
            }
            return;
        }
        int length = wc.getByte_len();
        ByteBuffer view = messageViews[slot];
        if (length < HEADER_BYTES || length > settings.slotSize()) {
            synchronized (this) {
                failLocked(new CommunicatorException("peer " + peer + " sent a frame of " + length + " bytes; a"
                        + " verbs frame has a 4-byte header and at most " + settings.slotSize() + " bytes"), after);
            }
            return;
        }
        byte type = view.get(0);
        int returned = view.getShort(2) & 0xffff;
        if (type != TYPE_MESSAGE && type != TYPE_CREDIT) {
            synchronized (this) {
                failLocked(new CommunicatorException("peer " + peer + " sent a frame of unknown type " + type
                        + ", expected " + TYPE_MESSAGE + " (message) or " + TYPE_CREDIT + " (credit)"), after);
            }
            return;
        }
        boolean deliver;
        synchronized (this) {
            deliver = type == TYPE_MESSAGE && failure == null && !closed;
        }
        if (deliver) {
            view.limit(length).position(HEADER_BYTES);
            try {
                handler.onMessage(view);
            } catch (RuntimeException e) {
                LOG.warn("handler of the verbs connection to {} threw", peer, e);
            } finally {
                view.clear();
            }
        }
        synchronized (this) {
            credits += returned;
            if (failure != null || closed) {
                return;
            }
            try {
                recvPosts[slot].execute();
                unreturned++;
            } catch (IOException | RuntimeException e) {
                failLocked(new CommunicatorException("re-posting a receive on the connection to " + peer
                        + " failed: " + e.getMessage(), e), after);
                return;
            }
            drainLocked(after);
        }
    }

    private void sendCompleted(int slot, boolean chainHead, IbvWC wc, List<Runnable> after) {
        Completion d = sendDone[slot];
        if (wc.getStatus() == SUCCESS) {
            sendDone[slot] = null;
            freeSend[freeSendCount++] = slot;
            if (d != null) {
                after.add(d::completed);
            }
            return;
        }
        IOException e = completionError(chainHead ? "RDMA write of a notified write" : "send", wc);
        if (d != null) {
            sendDone[slot] = null;
            after.add(() -> d.failed(e));
        }
        // The signalled tail of a chain still comes back (flushed) and frees the slot.
        if (!chainHead) {
            freeSend[freeSendCount++] = slot;
        }
        failOnError(wc, after);
    }

    private void rdmaCompleted(int slot, IbvWC wc, List<Runnable> after) {
        Completion d = rdmaDone[slot];
        rdmaDone[slot] = null;
        freeRdma[freeRdmaCount++] = slot;
        if (wc.getStatus() == SUCCESS) {
            if (d != null) {
                after.add(d::completed);
            }
            return;
        }
        IOException e = completionError(rdmaIsRead[slot] ? "RDMA read" : "RDMA write", wc);
        if (d != null) {
            after.add(() -> d.failed(e));
        }
        failOnError(wc, after);
    }

    /** Any error but a flush leaves the queue pair in the error state: the connection is over. */
    private void failOnError(IbvWC wc, List<Runnable> after) {
        int status = wc.getStatus();
        if (status == FLUSHED) {
            return;
        }
        failLocked(new CommunicatorException("the queue pair to " + peer + " entered the error state after "
                + statusName(status) + "; the connection cannot be used any more", status, null), after);
    }

    private IOException completionError(String what, IbvWC wc) {
        int status = wc.getStatus();
        if (status == FLUSHED) {
            if (closed && failure == null) {
                return new AsynchronousCloseException();
            }
            return new CommunicatorException(what + " to " + peer + " was flushed: the connection failed"
                    + (failure != null ? " (" + failure.getMessage() + ")" : ""), status, failure);
        }
        if (status == REMOTE_ACCESS) {
            return new RemoteAccessException(what + " to " + peer + " was refused by the peer's adapter"
                    + " (IBV_WC_REM_ACCESS_ERR): the remote region was deregistered, or its key, bounds or rights"
                    + " do not match");
        }
        String hint = status == RETRY_EXCEEDED ? " (peer unreachable or gone)" : "";
        return new CommunicatorException(what + " to " + peer + " failed: " + statusName(status) + hint
                + " (vendor error 0x" + Integer.toHexString(wc.getVendor_err()) + ")", status, null);
    }

    static String statusName(int status) {
        IbvWcStatus[] all = IbvWcStatus.values();
        return status >= 0 && status < all.length ? all[status].name() : "work completion status " + status;
    }

    // ---- failure and close --------------------------------------------------------------------------------------

    /** The peer disconnected (rdma-cm event) or the connection broke underneath. */
    void fail(IOException cause) {
        List<Runnable> after = new ArrayList<>(1);
        synchronized (this) {
            failLocked(cause, after);
        }
        for (Runnable r : after) {
            r.run();
        }
    }

    private void failLocked(IOException cause, List<Runnable> after) {
        if (failure != null || closed) {
            return;
        }
        failure = cause;
        IOException refused = refusal();
        for (Pending p = pending.poll(); p != null; p = pending.poll()) {
            Completion d = p.done;
            after.add(() -> d.failed(refused));
        }
        // Flushes whatever is still posted, so its completions come back failed rather than never.
        verbs.disconnect();
        ChannelHandler h = handler;
        if (!errorReported && h != null) {
            errorReported = true;
            after.add(() -> h.onError(cause));
        }
    }

    @Override
    public void close() {
        Thread progressThread;
        List<Runnable> after = new ArrayList<>();
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            for (Pending p = pending.poll(); p != null; p = pending.poll()) {
                Completion d = p.done;
                after.add(() -> d.failed(new AsynchronousCloseException()));
            }
            progressThread = progress;
        }
        for (Runnable r : after) {
            r.run();
        }
        verbs.disconnect();
        if (progressThread == Thread.currentThread()) {
            // Closed from a handler: the progress loop tears down once the handler returns.
            teardownByLoop = true;
            stopping = true;
            return;
        }
        awaitFlush(progressThread);
        stopping = true;
        if (progressThread != null) {
            try {
                progressThread.join(TimeUnit.SECONDS.toMillis(2));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            if (progressThread.isAlive()) {
                LOG.warn("the progress thread of the verbs connection to {} did not stop within 2 s", peer);
            }
        }
        tearDown();
    }

    private void awaitFlush(Thread progressThread) {
        long deadline = System.nanoTime() + CLOSE_FLUSH_NANOS;
        try {
            while (true) {
                long left = deadline - System.nanoTime();
                synchronized (this) {
                    if (inFlight() == 0 || left <= 0) {
                        return;
                    }
                    if (progressThread != null) {
                        TimeUnit.NANOSECONDS.timedWait(this, left);
                        continue;
                    }
                }
                if (progressOnce() == 0 && !verbs.awaitCompletions(AWAIT_MILLIS)) {
                    progressOnce();
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (IOException | RuntimeException e) {
            LOG.debug("draining completions of the connection to {} while closing: {}", peer, e.toString());
        }
    }

    /** Send and RDMA slots whose work requests have not completed. */
    synchronized int inFlight() {
        return (freeSend.length - freeSendCount) + (freeRdma.length - freeRdmaCount);
    }

    private void tearDown() {
        List<Runnable> after = new ArrayList<>();
        List<Local> toDeregister;
        synchronized (this) {
            if (tornDown) {
                return;
            }
            tornDown = true;
            for (int i = 0; i < sendDone.length; i++) {
                failClosed(sendDone[i], after);
                sendDone[i] = null;
            }
            for (int i = 0; i < rdmaDone.length; i++) {
                failClosed(rdmaDone[i], after);
                rdmaDone[i] = null;
            }
            toDeregister = new ArrayList<>(regions);
            regions.clear();
        }
        for (Runnable r : after) {
            r.run();
        }
        for (Local r : toDeregister) {
            deregisterQuietly(r.mr);
        }
        for (SVCPostRecv r : recvPosts) {
            r.free();
        }
        sendPost.free();
        writePost.free();
        notifiedWritePost.free();
        readPost.free();
        poll.free();
        deregisterQuietly(slotsMr);
        verbs.destroy();
        onClosed.run();
    }

    private static void failClosed(Completion d, List<Runnable> after) {
        if (d != null && d != NOTHING) {
            after.add(() -> d.failed(new AsynchronousCloseException()));
        }
    }

    private void progressLoop() {
        try {
            while (!stopping) {
                if (progressOnce() == 0) {
                    verbs.awaitCompletions(AWAIT_MILLIS);
                }
            }
        } catch (IOException | RuntimeException e) {
            fail(new CommunicatorException("polling completions of the connection to " + peer + " failed: "
                    + e.getMessage(), e));
        }
        if (teardownByLoop) {
            tearDown();
        }
    }

    // ---- regions and queued operations --------------------------------------------------------------------------

    /** A memory region of this connection's protection domain. */
    static final class Local implements LocalRegion {
        final VerbsChannel channel;
        final IbvMr mr;
        final long address;
        final long length;
        private final RegionDescriptor descriptor;
        // The registered memory must stay reachable for as long as the adapter may touch it.
        private final ByteBuffer memory;
        private volatile boolean closed;

        Local(VerbsChannel channel, ByteBuffer memory, IbvMr mr, long address, long length, Set<Access> access) {
            this.channel = channel;
            this.memory = memory;
            this.mr = mr;
            this.address = address;
            this.length = length;
            this.descriptor = new RegionDescriptor(address, length, access,
                    ByteBuffer.allocate(4).putInt(mr.getRkey()).array());
        }

        @Override
        public long address() {
            return address;
        }

        @Override
        public long length() {
            return length;
        }

        @Override
        public RegionDescriptor descriptor() {
            return descriptor;
        }

        boolean isClosed() {
            return closed;
        }

        @Override
        public void close() {
            if (!closed) {
                closed = true;
                channel.deregister(this);
            }
        }

        @Override
        public String toString() {
            return descriptor.toString();
        }
    }

    /** A peer's region: its address range and rkey, nothing native to release. */
    static final class Remote implements RemoteRegion {
        final RegionDescriptor descriptor;
        final int rkey;

        Remote(RegionDescriptor descriptor, int rkey) {
            this.descriptor = descriptor;
            this.rkey = rkey;
        }

        @Override
        public RegionDescriptor descriptor() {
            return descriptor;
        }

        @Override
        public void close() {
        }

        @Override
        public String toString() {
            return descriptor.toString();
        }
    }

    /** An operation waiting for a credit or a slot; its bytes were copied when it was issued. */
    private static final class Pending {
        static final int MESSAGE = 0;
        static final int WRITE = 1;
        static final int READ = 2;

        final int kind;
        final byte[] bytes;
        final Local local;
        final long localAddress;
        final Remote remote;
        final long remoteAddress;
        final int length;
        final Completion done;

        private Pending(int kind, byte[] bytes, Local local, long localAddress, Remote remote, long remoteAddress,
                int length, Completion done) {
            this.kind = kind;
            this.bytes = bytes;
            this.local = local;
            this.localAddress = localAddress;
            this.remote = remote;
            this.remoteAddress = remoteAddress;
            this.length = length;
            this.done = done;
        }

        static Pending message(byte[] bytes, Completion done) {
            return new Pending(MESSAGE, bytes, null, 0, null, 0, 0, done);
        }

        static Pending write(Local local, long localAddress, Remote remote, long remoteAddress, int length,
                byte[] notification, Completion done) {
            return new Pending(WRITE, notification, local, localAddress, remote, remoteAddress, length, done);
        }

        static Pending read(Local local, long localAddress, Remote remote, long remoteAddress, int length,
                Completion done) {
            return new Pending(READ, null, local, localAddress, remote, remoteAddress, length, done);
        }
    }
}
