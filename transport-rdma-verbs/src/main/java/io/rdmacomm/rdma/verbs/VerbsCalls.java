package io.rdmacomm.rdma.verbs;

import com.ibm.disni.verbs.IbvMr;
import com.ibm.disni.verbs.IbvRecvWR;
import com.ibm.disni.verbs.IbvSendWR;
import com.ibm.disni.verbs.IbvSge;
import com.ibm.disni.verbs.IbvWC;
import com.ibm.disni.verbs.SVCPollCq;
import com.ibm.disni.verbs.SVCPostRecv;
import com.ibm.disni.verbs.SVCPostSend;
import com.ibm.disni.verbs.StatefulVerbCall;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.LinkedList;
import java.util.List;

/**
 * The DiSNI side of one connection's data path: the registered slot memory (receive slots, then send slots) and
 * the stateful verb calls built once over it: a receive per receive slot, a SEND, an RDMA WRITE, a notified write
 * (an unsignalled WRITE chained with a signalled SEND), an RDMA READ, and the completion queue's poll. Each post
 * changes only the fields DiSNI lets one modify (wr_id, SGE, remote address, rkey) and re-executes the call.
 *
 * <p>A frame in a slot starts with a 4-byte header: type, reserved, credits returned (u16, big-endian).
 */
final class VerbsCalls {
    static final int HEADER_BYTES = 4;
    static final byte TYPE_MESSAGE = 1;
    static final byte TYPE_CREDIT = 2;

    // wr_id layout: slot index in the low 32 bits, kind in bits 32-33, bit 34 set on the unsignalled head of a chain.
    static final long KIND_RECV = 1L << 32;
    static final long KIND_SEND = 2L << 32;
    static final long KIND_RDMA = 3L << 32;
    static final long KIND_MASK = 3L << 32;
    static final long CHAIN_HEAD = 1L << 34;

    private static final int POLL_BATCH = 16;

    private final Verbs verbs;
    private final Settings settings;
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

    /**
     * Registers the slot memory, builds the stateful calls and pre-posts every receive. On failure everything made
     * here is released again.
     */
    VerbsCalls(Verbs verbs, Settings settings, String peer) throws IOException {
        this.verbs = verbs;
        this.settings = settings;
        int slotCount = settings.recvSlots() + settings.sendSlots();
        this.slots = ByteBuffer.allocateDirect(slotCount * settings.slotSize()).order(ByteOrder.BIG_ENDIAN);
        this.slotsAddress = verbs.address(slots);
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
                VerbsMemory.deregisterQuietly(verbs, mr, peer);
            }
            throw e;
        }
        this.slotsMr = mr;
        VerbsMemory.LIVE.registered(slots.capacity());
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

    // ---- posting -------------------------------------------------------------------------------------------------

    /** Copies a frame (header, then {@code payload}'s remaining bytes) into send slot {@code slot}; its length. */
    int fillSendSlot(int slot, byte type, int creditsReturned, ByteBuffer payload) {
        int offset = sendSlotOffset(slot);
        int length = payload == null ? 0 : payload.remaining();
        slots.put(offset, type);
        slots.put(offset + 1, (byte) 0);
        slots.putShort(offset + 2, (short) creditsReturned);
        if (length > 0) {
            slots.put(offset + HEADER_BYTES, payload, payload.position(), length);
        }
        return HEADER_BYTES + length;
    }

    /** A signalled SEND of the frame in send slot {@code slot}. */
    void postSend(int slot, int frameLength) throws IOException {
        SVCPostSend.SendWRMod wr = sendPost.getWrMod(0);
        wr.setWr_id(KIND_SEND | slot);
        SVCPostSend.SgeMod sge = wr.getSgeMod(0);
        sge.setAddr(slotsAddress + sendSlotOffset(slot));
        sge.setLength(frameLength);
        sendPost.execute();
    }

    /** An unsignalled RDMA WRITE chained with a signalled SEND of the notification in send slot {@code slot}. */
    void postNotifiedWrite(int slot, int frameLength, long localAddress, int lkey, int length, long remoteAddress,
            int rkey) throws IOException {
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
        frame.setAddr(slotsAddress + sendSlotOffset(slot));
        frame.setLength(frameLength);
        notifiedWritePost.execute();
    }

    /** A signalled RDMA READ or WRITE tracked in RDMA slot {@code slot}. */
    void postRdma(boolean isRead, int slot, long localAddress, int lkey, int length, long remoteAddress, int rkey)
            throws IOException {
        SVCPostSend call = isRead ? readPost : writePost;
        SVCPostSend.SendWRMod wr = call.getWrMod(0);
        wr.setWr_id(KIND_RDMA | slot);
        SVCPostSend.SgeMod sge = wr.getSgeMod(0);
        sge.setAddr(localAddress);
        sge.setLength(length);
        sge.setLkey(lkey);
        wr.getRdmaMod().setRemote_addr(remoteAddress);
        wr.getRdmaMod().setRkey(rkey);
        call.execute();
    }

    void repostReceive(int slot) throws IOException {
        recvPosts[slot].execute();
    }

    // ---- completions ---------------------------------------------------------------------------------------------

    /** Polls the completion queue once; the completions are then {@link #completion}(0 .. n-1). */
    int poll() throws IOException {
        return poll.execute().getPolls();
    }

    IbvWC completion(int i) {
        return wcs[i];
    }

    /** The frame received into receive slot {@code slot}: a read-only view of the whole slot. */
    ByteBuffer messageView(int slot) {
        return messageViews[slot];
    }

    /** Frees the stateful calls and deregisters the slot memory. */
    void free(String peer) {
        for (SVCPostRecv r : recvPosts) {
            r.free();
        }
        sendPost.free();
        writePost.free();
        notifiedWritePost.free();
        readPost.free();
        poll.free();
        VerbsMemory.deregisterQuietly(verbs, slotsMr, peer);
        VerbsMemory.LIVE.released(slots.capacity());
    }
}
