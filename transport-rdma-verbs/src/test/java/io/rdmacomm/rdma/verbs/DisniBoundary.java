package io.rdmacomm.rdma.verbs;

import static org.mockito.ArgumentMatchers.any;
import static org.mockito.ArgumentMatchers.anyInt;
import static org.mockito.ArgumentMatchers.anyLong;
import static org.mockito.Mockito.doAnswer;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.when;

import com.ibm.disni.verbs.IbvMr;
import com.ibm.disni.verbs.IbvRecvWR;
import com.ibm.disni.verbs.IbvSendWR;
import com.ibm.disni.verbs.IbvSge;
import com.ibm.disni.verbs.IbvWC;
import com.ibm.disni.verbs.SVCPollCq;
import com.ibm.disni.verbs.SVCPostRecv;
import com.ibm.disni.verbs.SVCPostSend;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * The DiSNI side of one connection for unit tests: a Mockito {@link Verbs} whose stateful calls record what would
 * reach the adapter. Send calls are recording fakes of {@link SVCPostSend} that apply every {@code SendWRMod}
 * change to a copy of the work requests they were built from, and snapshot the whole chain at each
 * {@code execute()}: a test sees the work requests as posted, not just the calls made. Completions are queued by
 * the test and handed out by the fake poll, like {@code ibv_poll_cq} would.
 */
final class DisniBoundary {
    static final long SLOTS_ADDRESS = 0x7f00_0000_0000L;
    static final int SLOTS_LKEY = 0x11;
    static final int SLOTS_RKEY = 0x22;

    /** One work request as it stood when its chain was posted. */
    record Wr(long wrId, int opcode, int flags, int imm, long addr, int length, int lkey, long remoteAddr,
            int rkey) {
    }

    final Verbs verbs = mock(Verbs.class);
    final List<RecordingSend> sendCalls = new ArrayList<>();
    final List<SVCPostRecv> recvCalls = new ArrayList<>();
    final List<IbvRecvWR> recvWrs = new ArrayList<>();
    final Map<SVCPostRecv, Integer> recvExecutions = new IdentityHashMap<>();
    final List<IbvMr> registered = new ArrayList<>();
    final List<IbvMr> deregistered = new ArrayList<>();
    final ArrayDeque<long[]> completions = new ArrayDeque<>();
    final CountDownLatch destroyed = new CountDownLatch(1);
    ByteBuffer slots;
    IbvWC[] wcs;
    int nextKey = 0x100;

    DisniBoundary() throws IOException {
        when(verbs.address(any(ByteBuffer.class))).thenAnswer(inv -> {
            ByteBuffer b = inv.getArgument(0);
            if (slots == null) {
                slots = b;
                return SLOTS_ADDRESS;
            }
            return 0x1000_0000L * (registered.size() + 1);
        });
        when(verbs.register(anyLong(), anyInt(), anyInt())).thenAnswer(inv -> {
            IbvMr mr = mock(IbvMr.class);
            boolean first = registered.isEmpty();
            when(mr.getLkey()).thenReturn(first ? SLOTS_LKEY : nextKey++);
            when(mr.getRkey()).thenReturn(first ? SLOTS_RKEY : nextKey++);
            when(mr.getAddr()).thenReturn((long) inv.getArgument(0));
            when(mr.getLength()).thenReturn((int) inv.getArgument(1));
            registered.add(mr);
            return mr;
        });
        doAnswer(inv -> deregistered.add(inv.getArgument(0))).when(verbs).deregister(any(IbvMr.class));
        when(verbs.postSend(any())).thenAnswer(inv -> {
            RecordingSend s = new RecordingSend(inv.getArgument(0));
            sendCalls.add(s);
            return s;
        });
        when(verbs.postRecv(any())).thenAnswer(inv -> {
            List<IbvRecvWR> wrs = inv.getArgument(0);
            SVCPostRecv r = mock(SVCPostRecv.class);
            when(r.execute()).thenAnswer(x -> {
                recvExecutions.merge(r, 1, Integer::sum);
                return r;
            });
            recvCalls.add(r);
            recvWrs.addAll(wrs);
            return r;
        });
        when(verbs.pollCq(any())).thenAnswer(inv -> {
            wcs = inv.getArgument(0);
            return new QueuedPoll();
        });
        when(verbs.awaitCompletions(anyInt())).thenAnswer(inv -> {
            destroyed.await((int) inv.getArgument(0), TimeUnit.MILLISECONDS);
            return false;
        });
        doAnswer(inv -> {
            destroyed.countDown();
            return null;
        }).when(verbs).destroy();
    }

    /** The stateful send call built for {@code index}: 0 send, 1 write, 2 notified write, 3 read. */
    RecordingSend send(int index) {
        return sendCalls.get(index);
    }

    /** Queues a completion for the fake poll. */
    void complete(long wrId, int status, int byteLen) {
        completions.add(new long[] {wrId, status, byteLen});
    }

    void complete(long wrId, IbvWC.IbvWcStatus status) {
        complete(wrId, status.ordinal(), 0);
    }

    /** Puts a frame into receive slot {@code slot}, as the peer's SEND would, and queues its completion. */
    void receive(int slot, int slotSize, byte type, int creditsReturned, byte[] payload) {
        int off = slot * slotSize;
        slots.put(off, type).put(off + 1, (byte) 0).putShort(off + 2, (short) creditsReturned);
        slots.put(off + VerbsCalls.HEADER_BYTES, payload);
        complete(VerbsCalls.KIND_RECV | slot, IbvWC.IbvWcStatus.IBV_WC_SUCCESS.ordinal(),
                VerbsCalls.HEADER_BYTES + payload.length);
    }

    int recvExecutions(int slot) {
        return recvExecutions.getOrDefault(recvCalls.get(slot), 0);
    }

    /** The frame bytes a posted SEND work request points at (inside the slot buffer). */
    ByteBuffer frame(Wr wr) {
        int off = (int) (wr.addr() - SLOTS_ADDRESS);
        return slots.duplicate().position(off).limit(off + wr.length()).slice();
    }

    /** Hands queued completions to the channel's poll buffer, at most as many as fit. */
    final class QueuedPoll extends SVCPollCq {
        private int polls;

        @Override
        public SVCPollCq execute() {
            polls = 0;
            while (polls < wcs.length && !completions.isEmpty()) {
                long[] c = completions.poll();
                IbvWC wc = wcs[polls++];
                wc.setWr_id(c[0]);
                wc.setStatus((int) c[1]);
                wc.setByte_len((int) c[2]);
                wc.setVendor_err(c[1] == 0 ? 0 : 0x81);
            }
            return this;
        }

        @Override
        public int getPolls() {
            return polls;
        }

        @Override
        public boolean isValid() {
            return true;
        }

        @Override
        public SVCPollCq free() {
            return this;
        }
    }

    /** A stateful send call that keeps its own copy of the chain and records it at every execute. */
    static final class RecordingSend extends SVCPostSend {
        final List<IbvSendWR> templates;
        private final List<Mod> chain = new ArrayList<>();
        final List<List<Wr>> posted = new ArrayList<>();
        boolean freed;
        IOException failNext;

        RecordingSend(List<IbvSendWR> wrs) {
            this.templates = List.copyOf(wrs);
            for (IbvSendWR wr : wrs) {
                chain.add(new Mod(wr));
            }
        }

        @Override
        public SendWRMod getWrMod(int index) {
            return chain.get(index);
        }

        @Override
        public SVCPostSend execute() throws IOException {
            if (failNext != null) {
                IOException e = failNext;
                failNext = null;
                throw e;
            }
            List<Wr> snapshot = new ArrayList<>();
            for (Mod m : chain) {
                snapshot.add(m.snapshot());
            }
            posted.add(snapshot);
            return this;
        }

        @Override
        public boolean isValid() {
            return !freed;
        }

        @Override
        public SVCPostSend free() {
            freed = true;
            return this;
        }

        List<Wr> last() {
            return posted.get(posted.size() - 1);
        }
    }

    private static final class Mod implements SVCPostSend.SendWRMod, SVCPostSend.RdmaMod, SVCPostSend.SgeMod {
        private long wrId;
        private final int numSge;
        private final int opcode;
        private int flags;
        private final int imm;
        private long remoteAddr;
        private int rkey;
        private int reserved;
        private long addr;
        private int length;
        private int lkey;

        Mod(IbvSendWR wr) {
            this.wrId = wr.getWr_id();
            this.numSge = wr.getNum_sge();
            this.opcode = wr.getOpcode();
            this.flags = wr.getSend_flags();
            this.imm = wr.getImm_data();
            this.remoteAddr = wr.getRdma().getRemote_addr();
            this.rkey = wr.getRdma().getRkey();
            IbvSge sge = wr.getSge(0);
            this.addr = sge.getAddr();
            this.length = sge.getLength();
            this.lkey = sge.getLkey();
        }

        Wr snapshot() {
            return new Wr(wrId, opcode, flags, imm, addr, length, lkey, remoteAddr, rkey);
        }

        @Override
        public void setWr_id(long id) {
            wrId = id;
        }

        @Override
        public void setSend_flags(int f) {
            flags = f;
        }

        @Override
        public long getWr_id() {
            return wrId;
        }

        @Override
        public int getNum_sge() {
            return numSge;
        }

        @Override
        public int getOpcode() {
            return opcode;
        }

        @Override
        public int getSend_flags() {
            return flags;
        }

        @Override
        public SVCPostSend.RdmaMod getRdmaMod() {
            return this;
        }

        @Override
        public SVCPostSend.SgeMod getSgeMod(int index) {
            if (index != 0) {
                throw new IndexOutOfBoundsException(index);
            }
            return this;
        }

        @Override
        public void setRemote_addr(long a) {
            remoteAddr = a;
        }

        @Override
        public long getRemote_addr() {
            return remoteAddr;
        }

        @Override
        public void setRkey(int k) {
            rkey = k;
        }

        @Override
        public int getRkey() {
            return rkey;
        }

        @Override
        public void setReserved(int r) {
            reserved = r;
        }

        @Override
        public int getReserved() {
            return reserved;
        }

        @Override
        public void setAddr(long a) {
            addr = a;
        }

        @Override
        public long getAddr() {
            return addr;
        }

        @Override
        public void setLength(int l) {
            length = l;
        }

        @Override
        public int getLength() {
            return length;
        }

        @Override
        public void setLkey(int k) {
            lkey = k;
        }

        @Override
        public int getLkey() {
            return lkey;
        }
    }
}
