package io.rdmacomm.rdma.verbs;

import static io.rdmacomm.rdma.verbs.DisniBoundary.SLOTS_ADDRESS;
import static io.rdmacomm.rdma.verbs.DisniBoundary.SLOTS_LKEY;
import static io.rdmacomm.rdma.verbs.VerbsCalls.CHAIN_HEAD;
import static io.rdmacomm.rdma.verbs.VerbsCalls.HEADER_BYTES;
import static io.rdmacomm.rdma.verbs.VerbsCalls.KIND_RDMA;
import static io.rdmacomm.rdma.verbs.VerbsCalls.KIND_RECV;
import static io.rdmacomm.rdma.verbs.VerbsCalls.KIND_SEND;
import static io.rdmacomm.rdma.verbs.VerbsCalls.TYPE_CREDIT;
import static io.rdmacomm.rdma.verbs.VerbsCalls.TYPE_MESSAGE;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.ArgumentMatchers.anyInt;
import static org.mockito.ArgumentMatchers.anyLong;
import static org.mockito.Mockito.atLeastOnce;
import static org.mockito.Mockito.never;
import static org.mockito.Mockito.times;
import static org.mockito.Mockito.verify;

import com.ibm.disni.verbs.IbvMr;
import com.ibm.disni.verbs.IbvRecvWR;
import com.ibm.disni.verbs.IbvSendWR;
import com.ibm.disni.verbs.IbvWC.IbvWcStatus;
import io.rdmacomm.api.Access;
import io.rdmacomm.api.CommunicatorException;
import io.rdmacomm.api.RegionDescriptor;
import io.rdmacomm.api.RegisteredMemory;
import io.rdmacomm.api.RemoteAccessException;
import io.rdmacomm.rdma.spi.ChannelHandler;
import io.rdmacomm.rdma.spi.Completion;
import io.rdmacomm.rdma.spi.LocalRegion;
import io.rdmacomm.rdma.spi.RemoteRegion;
import io.rdmacomm.rdma.verbs.DisniBoundary.Wr;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.AsynchronousCloseException;
import java.nio.channels.ClosedChannelException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The verbs data path against DiSNI stand-ins: work requests as posted, completions, credits and slot reuse. */
@Timeout(30)
class VerbsChannelTest {
    private static final Settings SMALL = new Settings(8, 4, 2, 128);
    private static final int WRITE_OPCODE = IbvSendWR.IBV_WR_RDMA_WRITE;
    private static final int SEND_OPCODE = IbvSendWR.IBV_WR_SEND;
    private static final int READ_OPCODE = IbvSendWR.IBV_WR_RDMA_READ;
    private static final int SIGNALED = IbvSendWR.IBV_SEND_SIGNALED;

    private DisniBoundary disni;
    private Handler handler;
    private AtomicInteger closedCallbacks;
    private VerbsChannel channel;

    /** Records what the channel hands to the engine. */
    static final class Handler implements ChannelHandler {
        final List<byte[]> messages = new ArrayList<>();
        final List<IOException> errors = new ArrayList<>();

        @Override
        public void onMessage(ByteBuffer message) {
            byte[] b = new byte[message.remaining()];
            message.get(b);
            messages.add(b);
        }

        @Override
        public void onError(IOException cause) {
            errors.add(cause);
        }
    }

    /** Records one completion. */
    static final class Done implements Completion {
        int completed;
        final List<IOException> failures = new ArrayList<>();

        @Override
        public void completed() {
            completed++;
        }

        @Override
        public void failed(IOException cause) {
            failures.add(cause);
        }

        IOException failure() {
            assertEquals(0, completed, "completed and failed");
            assertEquals(1, failures.size(), "expected exactly one failure: " + failures);
            return failures.get(0);
        }

        void assertCompletedOnce() {
            assertEquals(List.of(), failures);
            assertEquals(1, completed);
        }

        void assertPending() {
            assertEquals(0, completed);
            assertEquals(List.of(), failures);
        }
    }

    @BeforeEach
    void open() throws IOException {
        disni = new DisniBoundary();
        handler = new Handler();
        closedCallbacks = new AtomicInteger();
        channel = new VerbsChannel(disni.verbs, "10.0.0.2:7471", SMALL, handler, closedCallbacks::incrementAndGet);
    }

    private static ByteBuffer text(String s) {
        return ByteBuffer.wrap(s.getBytes(StandardCharsets.UTF_8));
    }

    private static String text(ByteBuffer frame) {
        byte[] b = new byte[frame.remaining() - HEADER_BYTES];
        frame.get(HEADER_BYTES, b);
        return new String(b, StandardCharsets.UTF_8);
    }

    private void progress() throws IOException {
        while (channel.progressOnce() > 0) {
            // drain every queued completion
        }
    }

    private LocalRegion local(int capacity, Set<Access> access) throws IOException {
        return channel.register(ByteBuffer.allocateDirect(capacity), access);
    }

    private static RegionDescriptor peerRegion(long address, long length, Set<Access> access, int rkey) {
        return new RegionDescriptor(address, length, access, ByteBuffer.allocate(4).putInt(rkey).array());
    }

    // ---- set-up ---------------------------------------------------------------------------------------------

    @Test
    void receivesArePrePostedIntoRegisteredSlotsAndStatefulCallsBuiltOnce() throws IOException {
        verify(disni.verbs).register(SLOTS_ADDRESS, (SMALL.recvSlots() + SMALL.sendSlots()) * SMALL.slotSize(),
                IbvMr.IBV_ACCESS_LOCAL_WRITE);
        assertEquals(SMALL.recvSlots(), disni.recvWrs.size());
        for (int i = 0; i < SMALL.recvSlots(); i++) {
            IbvRecvWR wr = disni.recvWrs.get(i);
            assertEquals(KIND_RECV | i, wr.getWr_id());
            assertEquals(1, wr.getNum_sge());
            assertEquals(SLOTS_ADDRESS + (long) i * SMALL.slotSize(), wr.getSg_list().get(0).getAddr());
            assertEquals(SMALL.slotSize(), wr.getSg_list().get(0).getLength());
            assertEquals(SLOTS_LKEY, wr.getSg_list().get(0).getLkey());
            assertEquals(1, disni.recvExecutions(i), "receive " + i + " posted once");
        }
        assertEquals(4, disni.sendCalls.size(), "send, write, notified write, read");
        channel.send(text("a"), new Done());
        channel.send(text("b"), new Done());
        assertEquals(4, disni.sendCalls.size(), "stateful calls are reused, not rebuilt per operation");
        assertEquals(SMALL.slotSize() - HEADER_BYTES, channel.maxMessageSize());
    }

    // ---- work requests per operation ------------------------------------------------------------------------

    @Test
    void sendCopiesAFramedMessageIntoASendSlotAndPostsASignalledSend() throws IOException {
        ByteBuffer msg = text("hello");
        Done done = new Done();
        channel.send(msg, done);
        assertEquals(0, msg.position(), "the caller's buffer is copied, not consumed");
        Wr wr = disni.send(0).last().get(0);
        int sendSlot = (int) wr.wrId();
        assertEquals(KIND_SEND | sendSlot, wr.wrId());
        assertEquals(SEND_OPCODE, wr.opcode());
        assertEquals(SIGNALED, wr.flags());
        assertEquals(0, wr.imm(), "no immediate data: DiSNI's stateful send cannot change it per post");
        assertEquals(SLOTS_ADDRESS + (long) (SMALL.recvSlots() + sendSlot) * SMALL.slotSize(), wr.addr());
        assertEquals(HEADER_BYTES + 5, wr.length());
        assertEquals(SLOTS_LKEY, wr.lkey());
        ByteBuffer frame = disni.frame(wr);
        assertEquals(TYPE_MESSAGE, frame.get(0));
        assertEquals(0, frame.getShort(2), "no credits to return yet");
        assertEquals("hello", text(frame));
        done.assertPending();
        disni.complete(wr.wrId(), IbvWcStatus.IBV_WC_SUCCESS);
        progress();
        done.assertCompletedOnce();
    }

    @Test
    void writeWithoutNotificationIsOneSignalledRdmaWrite() throws IOException {
        LocalRegion src = local(4096, Set.of());
        RemoteRegion dst = channel.unpack(peerRegion(0x5000_0000L, 1 << 20, Set.of(Access.REMOTE_WRITE), 0xABCD));
        Done done = new Done();
        channel.write(src, src.address() + 100, dst, 0x5000_0000L + 4096, 1000, null, done);
        List<Wr> chain = disni.send(1).last();
        assertEquals(1, chain.size());
        Wr wr = chain.get(0);
        assertEquals(KIND_RDMA, wr.wrId() & VerbsCalls.KIND_MASK);
        assertEquals(WRITE_OPCODE, wr.opcode());
        assertEquals(SIGNALED, wr.flags());
        assertEquals(src.address() + 100, wr.addr());
        assertEquals(1000, wr.length());
        assertEquals(disni.registered.get(1).getLkey(), wr.lkey());
        assertEquals(0x5000_0000L + 4096, wr.remoteAddr());
        assertEquals(0xABCD, wr.rkey());
        assertEquals(0, wr.imm());
        disni.complete(wr.wrId(), IbvWcStatus.IBV_WC_SUCCESS);
        progress();
        done.assertCompletedOnce();
    }

    @Test
    void notifiedWriteIsAnUnsignalledWriteChainedWithASignalledSend() throws IOException {
        LocalRegion src = local(1 << 16, Set.of());
        RemoteRegion dst = channel.unpack(peerRegion(0x6000_0000L, 1 << 16, Set.of(Access.REMOTE_WRITE), 0x77));
        Done done = new Done();
        channel.write(src, src.address(), dst, 0x6000_0000L + 8, 65528, text("DATA 65528"), done);
        List<Wr> chain = disni.send(2).last();
        assertEquals(2, chain.size(), "one post of two work requests");
        Wr write = chain.get(0);
        Wr send = chain.get(1);
        int slot = (int) send.wrId();
        assertEquals(KIND_SEND | CHAIN_HEAD | slot, write.wrId());
        assertEquals(WRITE_OPCODE, write.opcode());
        assertEquals(0, write.flags(), "the write is unsignalled; the send's completion covers it");
        assertEquals(src.address(), write.addr());
        assertEquals(65528, write.length());
        assertEquals(disni.registered.get(1).getLkey(), write.lkey());
        assertEquals(0x6000_0000L + 8, write.remoteAddr());
        assertEquals(0x77, write.rkey());
        assertEquals(KIND_SEND | slot, send.wrId());
        assertEquals(SEND_OPCODE, send.opcode());
        assertEquals(SIGNALED, send.flags());
        assertEquals(SLOTS_LKEY, send.lkey());
        assertEquals("DATA 65528", text(disni.frame(send)));
        disni.complete(send.wrId(), IbvWcStatus.IBV_WC_SUCCESS);
        progress();
        done.assertCompletedOnce();
    }

    @Test
    void readIsASignalledRdmaReadIntoTheLocalRegion() throws IOException {
        LocalRegion dst = local(8192, Set.of());
        RemoteRegion src = channel.unpack(peerRegion(0x9000L, 8192, Set.of(Access.REMOTE_READ), 0x4242));
        Done done = new Done();
        channel.read(src, 0x9000L + 512, dst, dst.address() + 1024, 2048, done);
        Wr wr = disni.send(3).last().get(0);
        assertEquals(READ_OPCODE, wr.opcode());
        assertEquals(SIGNALED, wr.flags());
        assertEquals(dst.address() + 1024, wr.addr());
        assertEquals(2048, wr.length());
        assertEquals(disni.registered.get(1).getLkey(), wr.lkey());
        assertEquals(0x9000L + 512, wr.remoteAddr());
        assertEquals(0x4242, wr.rkey());
        disni.complete(wr.wrId(), IbvWcStatus.IBV_WC_SUCCESS);
        progress();
        done.assertCompletedOnce();
    }

    @Test
    void registrationMapsRightsToAccessFlagsAndPacksTheRkey() throws IOException {
        LocalRegion rw = local(4096, Access.readWrite());
        LocalRegion ro = local(4096, Set.of(Access.REMOTE_READ));
        int rwFlags = IbvMr.IBV_ACCESS_LOCAL_WRITE | IbvMr.IBV_ACCESS_REMOTE_WRITE | IbvMr.IBV_ACCESS_REMOTE_READ;
        verify(disni.verbs).register(rw.address(), 4096, rwFlags);
        verify(disni.verbs).register(ro.address(), 4096, IbvMr.IBV_ACCESS_LOCAL_WRITE | IbvMr.IBV_ACCESS_REMOTE_READ);
        RegionDescriptor d = rw.descriptor();
        assertEquals(rw.address(), d.address());
        assertEquals(4096, d.length());
        assertEquals(Access.readWrite(), d.access());
        assertArrayEquals(ByteBuffer.allocate(4).putInt(disni.registered.get(1).getRkey()).array(), d.key());
        RemoteRegion back = channel.unpack(RegionDescriptor.fromBytes(d.toBytes()));
        assertEquals(d, back.descriptor());
        rw.close();
        rw.close();
        assertEquals(List.of(disni.registered.get(1)), disni.deregistered, "deregistered once");
        assertThrows(IllegalArgumentException.class, () -> channel.register(ByteBuffer.allocate(16), Set.of()));
    }

    @Test
    void aDescriptorOfAnotherProviderIsRejectedByKeyLength() {
        RegionDescriptor ucx = new RegionDescriptor(0x1000, 64, Access.readWrite(), new byte[40]);
        CommunicatorException e = assertThrows(CommunicatorException.class, () -> channel.unpack(ucx));
        assertTrue(e.getMessage().contains("40-byte key") && e.getMessage().contains("4 bytes"), e.getMessage());
    }

    @Test
    void violationsVisibleLocallyFailThatOperationWithoutTouchingTheQueuePair() throws IOException {
        LocalRegion src = local(4096, Set.of());
        RemoteRegion readOnly = channel.unpack(peerRegion(0x8000L, 4096, Set.of(Access.REMOTE_READ), 5));
        RemoteRegion writable = channel.unpack(peerRegion(0x8000L, 4096, Set.of(Access.REMOTE_WRITE), 5));
        Done noRight = new Done();
        channel.write(src, src.address(), readOnly, 0x8000L, 16, null, noRight);
        assertInstanceOf(RemoteAccessException.class, noRight.failure());
        Done outOfBounds = new Done();
        channel.write(src, src.address(), writable, 0x8000L + 4090, 16, null, outOfBounds);
        assertTrue(outOfBounds.failure().getMessage().contains("out of bounds"));
        Done noReadRight = new Done();
        channel.read(writable, 0x8000L, src, src.address(), 16, noReadRight);
        assertInstanceOf(RemoteAccessException.class, noReadRight.failure());
        Done localOutside = new Done();
        channel.write(src, src.address() + 4090, writable, 0x8000L, 16, null, localOutside);
        assertTrue(localOutside.failure().getMessage().contains("outside local region"));
        assertEquals(List.of(), disni.send(1).posted);
        assertEquals(List.of(), disni.send(3).posted);
        Done fine = new Done();
        channel.send(text("still usable"), fine);
        assertEquals(1, disni.send(0).posted.size());
        assertEquals(List.of(), handler.errors);
    }

    // ---- completion handling ------------------------------------------------------------------------------------

    @Test
    void remoteAccessErrorFailsTheOperationAndTheConnection() throws IOException {
        LocalRegion src = local(4096, Set.of());
        RemoteRegion dst = channel.unpack(peerRegion(0x8000L, 4096, Set.of(Access.REMOTE_WRITE), 9));
        Done stale = new Done();
        Done behind = new Done();
        channel.write(src, src.address(), dst, 0x8000L, 64, null, stale);
        channel.send(text("queued behind"), behind);
        disni.complete(disni.send(1).last().get(0).wrId(), IbvWcStatus.IBV_WC_REM_ACCESS_ERR);
        disni.complete(disni.send(0).last().get(0).wrId(), IbvWcStatus.IBV_WC_WR_FLUSH_ERR);
        progress();
        IOException e = stale.failure();
        assertInstanceOf(RemoteAccessException.class, e);
        assertTrue(e.getMessage().contains("IBV_WC_REM_ACCESS_ERR") && e.getMessage().contains("10.0.0.2:7471"),
                e.getMessage());
        IOException flushed = behind.failure();
        assertInstanceOf(CommunicatorException.class, flushed);
        assertTrue(flushed.getMessage().contains("flushed"), flushed.getMessage());
        assertEquals(IbvWcStatus.IBV_WC_WR_FLUSH_ERR.ordinal(),
                ((CommunicatorException) flushed).nativeStatus().getAsInt());
        assertEquals(1, handler.errors.size(), "onError exactly once");
        CommunicatorException broken = (CommunicatorException) handler.errors.get(0);
        assertTrue(broken.getMessage().contains("error state"), broken.getMessage());
        assertEquals(IbvWcStatus.IBV_WC_REM_ACCESS_ERR.ordinal(), broken.nativeStatus().getAsInt());
        verify(disni.verbs, atLeastOnce()).disconnect();
        Done after = new Done();
        channel.send(text("after"), after);
        assertTrue(after.failure().getMessage().contains("has failed"));
        assertEquals(1, disni.send(0).posted.size(), "nothing posted on a failed queue pair");
    }

    @Test
    void errorOnTheWriteOfANotifiedWriteFailsItOnceAndTheFlushedSendFreesTheSlot() throws IOException {
        LocalRegion src = local(4096, Set.of());
        RemoteRegion dst = channel.unpack(peerRegion(0x8000L, 4096, Set.of(Access.REMOTE_WRITE), 9));
        Done done = new Done();
        channel.write(src, src.address(), dst, 0x8000L, 64, text("n"), done);
        List<Wr> chain = disni.send(2).last();
        disni.complete(chain.get(0).wrId(), IbvWcStatus.IBV_WC_REM_ACCESS_ERR);
        disni.complete(chain.get(1).wrId(), IbvWcStatus.IBV_WC_WR_FLUSH_ERR);
        progress();
        assertInstanceOf(RemoteAccessException.class, done.failure());
        assertEquals(0, channel.inFlight(), "the send slot came back with the flushed tail");
    }

    @Test
    void retryExceededNamesThePeerAndCarriesTheStatus() throws IOException {
        Done done = new Done();
        channel.send(text("x"), done);
        disni.complete(disni.send(0).last().get(0).wrId(), IbvWcStatus.IBV_WC_RETRY_EXC_ERR);
        progress();
        CommunicatorException e = assertInstanceOf(CommunicatorException.class, done.failure());
        assertTrue(e.getMessage().contains("IBV_WC_RETRY_EXC_ERR") && e.getMessage().contains("unreachable"),
                e.getMessage());
        assertEquals(IbvWcStatus.IBV_WC_RETRY_EXC_ERR.ordinal(), e.nativeStatus().getAsInt());
        assertEquals(1, handler.errors.size());
    }

    @Test
    void flushedReceivesAreNotErrors() throws IOException {
        disni.complete(KIND_RECV | 2, IbvWcStatus.IBV_WC_WR_FLUSH_ERR);
        progress();
        assertEquals(List.of(), handler.errors);
        assertEquals(1, disni.recvExecutions(2), "a flushed receive is not re-posted");
    }

    @Test
    void registrationsAreCountedUntilDeregisteredOnceWithTheSlotMemoryAndTheChannel() throws IOException {
        RegisteredMemory.Counter verbsCount = RegisteredMemory.counter("verbs");
        RegisteredMemory.Usage open = verbsCount.usage();
        LocalRegion closed = local(4096, Set.of(Access.REMOTE_WRITE));
        LocalRegion left = local(1000, Set.of());
        assertEquals(new RegisteredMemory.Usage(open.regions() + 2, open.bytes() + 5096), verbsCount.usage());
        closed.close();
        closed.close();
        assertEquals(new RegisteredMemory.Usage(open.regions() + 1, open.bytes() + 1000), verbsCount.usage());
        channel.close();
        left.close();
        long slots = (long) (SMALL.recvSlots() + SMALL.sendSlots()) * SMALL.slotSize();
        assertEquals(new RegisteredMemory.Usage(open.regions() - 1, open.bytes() - slots), verbsCount.usage(),
                "the channel's slot memory and the region left registered are released with the channel, once");
    }

    @Test
    void closeFailsOutstandingOperationsAsAsynchronousCloseAndReleasesEverything() throws IOException {
        LocalRegion region = local(4096, Set.of());
        Done outstanding = new Done();
        channel.send(text("in flight"), outstanding);
        disni.complete(disni.send(0).last().get(0).wrId(), IbvWcStatus.IBV_WC_WR_FLUSH_ERR);
        channel.close();
        assertInstanceOf(AsynchronousCloseException.class, outstanding.failure());
        verify(disni.verbs, atLeastOnce()).disconnect();
        verify(disni.verbs).destroy();
        assertTrue(disni.deregistered.contains(disni.registered.get(0)), "slot buffers deregistered");
        assertTrue(disni.deregistered.contains(disni.registered.get(1)), "regions made through it deregistered");
        for (int i = 0; i < 4; i++) {
            assertTrue(disni.send(i).freed, "stateful call " + i + " freed");
        }
        assertEquals(1, closedCallbacks.get());
        channel.close();
        assertEquals(1, closedCallbacks.get(), "idempotent");
        verify(disni.verbs, times(1)).destroy();
        Done late = new Done();
        channel.send(text("late"), late);
        assertInstanceOf(ClosedChannelException.class, late.failure());
        assertThrows(ClosedChannelException.class, () -> channel.register(ByteBuffer.allocateDirect(8), Set.of()));
        region.close();
        assertEquals(2, disni.deregistered.size(), "a region closed after the channel is not deregistered twice");
        assertEquals(List.of(), handler.errors, "a local close is not an error");
    }

    @Test
    void closeWithAProgressThreadWaitsForFlushesAndStopsTheThread() throws Exception {
        channel.start();
        Done outstanding = new Done();
        channel.send(text("in flight"), outstanding);
        disni.complete(disni.send(0).last().get(0).wrId(), IbvWcStatus.IBV_WC_WR_FLUSH_ERR);
        channel.close();
        assertInstanceOf(AsynchronousCloseException.class, outstanding.failure());
        assertTrue(disni.destroyed.await(5, TimeUnit.SECONDS));
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            assertTrue(!t.getName().equals("rdmacomm-rdma-verbs-progress") || !t.isAlive(), "progress thread alive");
        }
    }

    @Test
    void closeFromInsideTheHandlerIsFinishedByTheProgressThread() throws Exception {
        DisniBoundary own = new DisniBoundary();
        VerbsChannel[] self = new VerbsChannel[1];
        List<String> seen = new ArrayList<>();
        self[0] = new VerbsChannel(own.verbs, "peer", SMALL, new ChannelHandler() {
            @Override
            public void onMessage(ByteBuffer message) {
                seen.add(Thread.currentThread().getName());
                self[0].close();
            }

            @Override
            public void onError(IOException cause) {
                seen.add("error " + cause);
            }
        }, closedCallbacks::incrementAndGet);
        own.receive(0, SMALL.slotSize(), TYPE_MESSAGE, 0, "bye".getBytes(StandardCharsets.UTF_8));
        self[0].start();
        assertTrue(own.destroyed.await(5, TimeUnit.SECONDS), "torn down after the handler returned");
        assertEquals(List.of("rdmacomm-rdma-verbs-progress"), seen);
        verify(own.verbs, times(1)).destroy();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (Thread.getAllStackTraces().keySet().stream()
                .anyMatch(t -> t.isAlive() && t.getName().equals("rdmacomm-rdma-verbs-progress"))) {
            assertTrue(System.nanoTime() < deadline, "progress thread still alive");
            Thread.onSpinWait();
        }
        assertEquals(1, closedCallbacks.get());
    }

    @Test
    void peerDisconnectReachesTheHandlerOnceAndFailsQueuedOperations() throws IOException {
        for (int i = 0; i < SMALL.recvSlots() - 1; i++) {
            channel.send(text("m" + i), new Done());
        }
        Done queued = new Done();
        channel.send(text("no credit left"), queued);
        queued.assertPending();
        channel.fail(new CommunicatorException("peer 10.0.0.2:7471 closed the RDMA connection"));
        channel.fail(new CommunicatorException("again"));
        assertTrue(queued.failure().getMessage().contains("closed the RDMA connection"));
        assertEquals(1, handler.errors.size());
    }

    // ---- receiving, credits and slot reuse ----------------------------------------------------------------------

    @Test
    void receivedMessageIsDeliveredWithoutHeaderAndItsSlotReposted() throws IOException {
        disni.receive(3, SMALL.slotSize(), TYPE_MESSAGE, 0, "ping".getBytes(StandardCharsets.UTF_8));
        progress();
        assertEquals(1, handler.messages.size());
        assertEquals("ping", new String(handler.messages.get(0), StandardCharsets.UTF_8));
        assertEquals(2, disni.recvExecutions(3), "pre-posted once, re-posted once");
        disni.receive(3, SMALL.slotSize(), TYPE_MESSAGE, 0, "again".getBytes(StandardCharsets.UTF_8));
        progress();
        assertEquals("again", new String(handler.messages.get(1), StandardCharsets.UTF_8));
        assertEquals(3, disni.recvExecutions(3));
    }

    @Test
    void aSenderKeepsTheLastCreditForCreditFramesAndQueuesUntilCreditsReturn() throws IOException {
        List<Done> sent = new ArrayList<>();
        for (int i = 0; i < SMALL.recvSlots(); i++) {
            Done d = new Done();
            sent.add(d);
            int before = disni.send(0).posted.size();
            channel.send(text("m" + i), d);
            if (disni.send(0).posted.size() > before) {
                // the send itself completes at once, so only credits can hold the next one back
                disni.complete(disni.send(0).last().get(0).wrId(), IbvWcStatus.IBV_WC_SUCCESS);
                progress();
            }
        }
        assertEquals(SMALL.recvSlots() - 1, disni.send(0).posted.size(), "one credit kept in reserve");
        Done last = sent.get(sent.size() - 1);
        last.assertPending();
        disni.receive(0, SMALL.slotSize(), TYPE_CREDIT, 3, new byte[0]);
        progress();
        assertEquals(SMALL.recvSlots(), disni.send(0).posted.size(), "the queued message went out with credits");
        assertEquals("m" + (SMALL.recvSlots() - 1), text(disni.frame(disni.send(0).last().get(0))));
        assertEquals(List.of(), handler.messages, "a credit frame is not a message");
    }

    @Test
    void sendSlotsAreReusedAfterTheirCompletionAndQueuedSendsKeepTheirOrder() throws IOException {
        List<Done> dones = new ArrayList<>();
        for (int i = 0; i < SMALL.sendSlots() + 2; i++) {
            Done d = new Done();
            dones.add(d);
            channel.send(text("s" + i), d);
        }
        List<List<Wr>> posted = disni.send(0).posted;
        assertEquals(SMALL.sendSlots(), posted.size(), "every send slot in use");
        long firstSlotAddress = posted.get(0).get(0).addr();
        disni.complete(posted.get(0).get(0).wrId(), IbvWcStatus.IBV_WC_SUCCESS);
        progress();
        dones.get(0).assertCompletedOnce();
        assertEquals(SMALL.sendSlots() + 1, posted.size());
        Wr reused = posted.get(SMALL.sendSlots()).get(0);
        assertEquals(firstSlotAddress, reused.addr(), "the freed slot carries the next queued message");
        assertEquals("s" + SMALL.sendSlots(), text(disni.frame(reused)));
        disni.complete(posted.get(1).get(0).wrId(), IbvWcStatus.IBV_WC_SUCCESS);
        progress();
        assertEquals("s" + (SMALL.sendSlots() + 1), text(disni.frame(disni.send(0).last().get(0))));
    }

    @Test
    void creditsArePiggybackedOnOutgoingFramesOrReturnedByACreditFrame() throws IOException {
        disni.receive(0, SMALL.slotSize(), TYPE_MESSAGE, 0, new byte[] {1});
        disni.receive(1, SMALL.slotSize(), TYPE_MESSAGE, 0, new byte[] {2});
        progress();
        channel.send(text("reply"), new Done());
        ByteBuffer reply = disni.frame(disni.send(0).last().get(0));
        assertEquals(2, reply.getShort(2), "two re-posted receives returned with the reply");
        int before = disni.send(0).posted.size();
        for (int i = 2; i < 2 + SMALL.recvSlots() / 2; i++) {
            disni.receive(i, SMALL.slotSize(), TYPE_MESSAGE, 0, new byte[] {(byte) i});
        }
        progress();
        assertEquals(before + 1, disni.send(0).posted.size(), "one credit frame once half the ring is re-posted");
        ByteBuffer credit = disni.frame(disni.send(0).last().get(0));
        assertEquals(TYPE_CREDIT, credit.get(0));
        assertEquals(SMALL.recvSlots() / 2, credit.getShort(2));
        assertEquals(HEADER_BYTES, credit.remaining());
    }

    @Test
    void rdmaSlotExhaustionQueuesInOrderBehindWhichLaterSendsWait() throws IOException {
        LocalRegion src = local(4096, Set.of());
        RemoteRegion dst = channel.unpack(peerRegion(0x8000L, 4096, Set.of(Access.REMOTE_WRITE), 9));
        for (int i = 0; i < SMALL.rdmaSlots(); i++) {
            channel.write(src, src.address(), dst, 0x8000L + i, 1, null, new Done());
        }
        Done third = new Done();
        channel.write(src, src.address(), dst, 0x8000L + 100, 1, null, third);
        Done sendBehind = new Done();
        channel.send(text("after the write"), sendBehind);
        assertEquals(SMALL.rdmaSlots(), disni.send(1).posted.size());
        assertEquals(List.of(), disni.send(0).posted, "a send does not overtake a queued write");
        disni.complete(disni.send(1).posted.get(0).get(0).wrId(), IbvWcStatus.IBV_WC_SUCCESS);
        progress();
        assertEquals(0x8000L + 100, disni.send(1).last().get(0).remoteAddr());
        assertEquals(1, disni.send(0).posted.size());
    }

    @Test
    void garbageFromThePeerFailsTheConnectionWithAClearMessage() throws IOException {
        disni.complete(KIND_RECV | 1, IbvWcStatus.IBV_WC_SUCCESS.ordinal(), 2);
        progress();
        assertEquals(1, handler.errors.size());
        assertTrue(handler.errors.get(0).getMessage().contains("frame of 2 bytes"), handler.errors.get(0).getMessage());
    }

    @Test
    void aFailingPostFailsTheOperationAndTheConnection() throws IOException {
        disni.send(0).failNext = new IOException("ibv_post_send: Cannot allocate memory");
        Done done = new Done();
        channel.send(text("x"), done);
        assertTrue(done.failure().getMessage().contains("Cannot allocate memory"));
        assertEquals(1, handler.errors.size());
    }

    @Test
    void aQueuedOperationWhosePostFailsFailsExactlyOnceAndTheRestOfTheQueueToo() throws IOException {
        List<Done> dones = new ArrayList<>();
        for (int i = 0; i < SMALL.sendSlots() + 2; i++) {
            Done d = new Done();
            dones.add(d);
            channel.send(text("q" + i), d);
        }
        disni.send(0).failNext = new IOException("ibv_post_send: queue pair in error state");
        disni.complete(disni.send(0).posted.get(0).get(0).wrId(), IbvWcStatus.IBV_WC_SUCCESS);
        progress();
        dones.get(0).assertCompletedOnce();
        Done firstQueued = dones.get(SMALL.sendSlots());
        assertTrue(firstQueued.failure().getMessage().contains("queue pair in error state"));
        Done secondQueued = dones.get(SMALL.sendSlots() + 1);
        assertTrue(secondQueued.failure().getMessage().contains("has failed"));
        assertEquals(1, handler.errors.size());
    }

    @Test
    void tooLargeMessagesAndNotificationsAreRefusedUpFront() throws IOException {
        Done big = new Done();
        channel.send(ByteBuffer.allocate(channel.maxMessageSize() + 1), big);
        assertTrue(big.failure().getMessage().contains("exceeds"));
        LocalRegion src = local(64, Set.of());
        RemoteRegion dst = channel.unpack(peerRegion(0x8000L, 64, Set.of(Access.REMOTE_WRITE), 9));
        Done bigNote = new Done();
        channel.write(src, src.address(), dst, 0x8000L, 8, ByteBuffer.allocate(channel.maxMessageSize() + 1),
                bigNote);
        assertTrue(bigNote.failure().getMessage().contains("exceeds"));
        assertEquals(List.of(), disni.send(0).posted);
        assertEquals(List.of(), disni.send(2).posted);
    }

    @Test
    void aFailedConstructionReleasesWhatItMade() throws IOException {
        DisniBoundary failing = new DisniBoundary();
        org.mockito.Mockito.when(failing.verbs.pollCq(any())).thenThrow(new IOException("no CQ"));
        assertThrows(IOException.class,
                () -> new VerbsChannel(failing.verbs, "p", SMALL, handler, () -> { }));
        assertEquals(1, failing.deregistered.size());
        for (DisniBoundary.RecordingSend s : failing.sendCalls) {
            assertTrue(s.freed);
        }
        verify(failing.verbs, never()).destroy();
        assertNotNull(failing.slots);
        verify(failing.verbs, times(1)).register(anyLong(), anyInt(), anyInt());
    }
}
