package io.rdmacomm.session;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.ArgumentMatchers.anyLong;
import static org.mockito.ArgumentMatchers.eq;
import static org.mockito.Mockito.doAnswer;
import static org.mockito.Mockito.inOrder;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.never;
import static org.mockito.Mockito.verify;
import static org.mockito.Mockito.when;

import io.rdmacomm.api.Access;
import io.rdmacomm.api.CommunicatorException;
import io.rdmacomm.api.MemoryRegion;
import io.rdmacomm.api.RegionDescriptor;
import io.rdmacomm.session.routine.RoutineRegistry;
import io.rdmacomm.testkit.ScriptedPeer;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.EnumSet;
import java.util.Random;
import java.util.Set;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.mockito.ArgumentCaptor;
import org.mockito.InOrder;

/**
 * The send, write, read and call exchanges on the server side against Mockito mocks of the communicator: the
 * remote-memory calls ({@code register}, {@code put}) are stubbed, so these tests see exactly which regions a
 * handler registers, what it advertises and what it puts where.
 */
@Timeout(10)
class ExchangeHandlersTest {
    private static final int REGION = 4096;
    private final SessionDispatcher dispatcher = SessionDispatcher.standard(new ExchangeSettings(REGION, 8,
            Duration.ofSeconds(5), RoutineRegistry.builtins()), Duration.ZERO, null);

    // ---- SEND ----------------------------------------------------------------------------------------------

    @Test
    void sendAcknowledgesByteCountAndCrc32cOfTheMessage() throws IOException {
        byte[] message = new byte[150_000];
        new Random(3).nextBytes(message);
        ScriptedPeer peer = new ScriptedPeer(ScriptedPeer.concat(SessionRequest.send(message.length).encode(),
                ByteBuffer.wrap(message)), 1000);

        dispatcher.serve(peer.communicator());

        ByteBuffer out = peer.written();
        assertEquals(SessionStatus.OK, Wire.reply(out).status());
        ExchangeResult ack = Wire.result(out);
        assertEquals(SessionStatus.OK, ack.status());
        CRC32C crc = new CRC32C();
        crc.update(message);
        assertEquals(message.length, ack.body().getInt(0));
        assertEquals((int) crc.getValue(), ack.body().getInt(4));
        assertEquals(0, out.remaining());
        InOrder order = inOrder(peer.communicator());
        order.verify(peer.communicator()).write(any());
        order.verify(peer.communicator()).sync();
        order.verify(peer.communicator()).close();
    }

    @Test
    void sendCutShortIsAnsweredTruncatedSayingHowMuchArrived() throws IOException {
        ScriptedPeer peer = new ScriptedPeer(ScriptedPeer.concat(SessionRequest.send(100).encode(),
                ByteBuffer.allocate(40)), 7);

        dispatcher.serve(peer.communicator());

        ByteBuffer out = peer.written();
        Wire.reply(out);
        ExchangeResult r = Wire.result(out);
        assertEquals(SessionStatus.TRUNCATED, r.status());
        assertTrue(r.message().contains("40 of 100 bytes"), r.message());
    }

    @Test
    void sendOfAnOversizedMessageIsRefusedBeforeAnyOfItIsRead() throws IOException {
        ByteBuffer request = SessionRequest.send(1).encode();
        request.putInt(SessionProtocol.REQUEST_HEADER_LENGTH, SessionProtocol.MAX_SEND_LENGTH + 1);
        ScriptedPeer peer = new ScriptedPeer(ScriptedPeer.concat(request, ByteBuffer.allocate(64)),
                Integer.MAX_VALUE);

        dispatcher.serve(peer.communicator());

        SessionReply reply = Wire.reply(peer.written());
        assertEquals(SessionStatus.REQUEST_TOO_LARGE, reply.status());
        assertTrue(reply.message().contains(String.valueOf(SessionProtocol.MAX_SEND_LENGTH + 1)), reply.message());
        assertEquals(SessionProtocol.REQUEST_HEADER_LENGTH + 4, peer.consumed());
    }

    // ---- WRITE ---------------------------------------------------------------------------------------------

    @Test
    void writeAdvertisesAWritableRegionAndReturnsTheSha256OfEveryChunkPlaced() throws Exception {
        byte[] chunk = new byte[REGION];
        new Random(5).nextBytes(chunk);
        // three full chunks and a short one; the mock "places" the same bytes each time, as the client would put them
        ScriptedPeer peer = new ScriptedPeer(ScriptedPeer.concat(SessionRequest.oneSidedWrite(3L * REGION + 100).encode(),
                notify(REGION), notify(REGION), notify(REGION), notify(100)), 5);
        FakeRegion region = FakeRegion.stub(peer, chunk);

        dispatcher.serve(peer.communicator());

        assertEquals(EnumSet.of(Access.REMOTE_WRITE), region.access);
        assertEquals(REGION, region.capacity);
        ByteBuffer out = peer.written();
        assertEquals(SessionStatus.OK, Wire.reply(out).status());
        assertEquals(region.descriptor, RegionDescriptor.readFrom(Wire.result(out).body()));
        assertEquals(REGION, Wire.result(out).body().getLong(0));
        assertEquals(2L * REGION, Wire.result(out).body().getLong(0));
        assertEquals(3L * REGION, Wire.result(out).body().getLong(0));
        ByteBuffer last = Wire.result(out).body();
        assertEquals(3L * REGION + 100, last.getLong());
        MessageDigest sha = MessageDigest.getInstance("SHA-256");
        for (int i = 0; i < 3; i++) {
            sha.update(chunk);
        }
        sha.update(chunk, 0, 100);
        byte[] digest = new byte[32];
        last.get(digest);
        assertArrayEquals(sha.digest(), digest);
        assertEquals(0, out.remaining());
        InOrder order = inOrder(region.mock, peer.communicator());
        order.verify(region.mock).close();
        order.verify(peer.communicator()).write(any());
        order.verify(peer.communicator()).sync();
    }

    @Test
    void writeSmallerThanTheRegionRegistersOnlyWhatItNeeds() throws IOException {
        ScriptedPeer peer = new ScriptedPeer(ScriptedPeer.concat(SessionRequest.oneSidedWrite(10).encode(), notify(10)),
                Integer.MAX_VALUE);
        FakeRegion region = FakeRegion.stub(peer, new byte[10]);

        dispatcher.serve(peer.communicator());

        assertEquals(10, region.capacity);
    }

    @Test
    void writeNotificationLargerThanTheRegionIsABadFrame() throws IOException {
        ScriptedPeer peer = new ScriptedPeer(ScriptedPeer.concat(SessionRequest.oneSidedWrite(10L * REGION).encode(),
                notify(REGION + 1)), Integer.MAX_VALUE);
        FakeRegion region = FakeRegion.stub(peer, new byte[REGION]);

        dispatcher.serve(peer.communicator());

        ByteBuffer out = peer.written();
        Wire.reply(out);
        Wire.result(out);
        ExchangeResult r = Wire.result(out);
        assertEquals(SessionStatus.BAD_FRAME, r.status());
        assertTrue(r.message().contains((REGION + 1) + " bytes") && r.message().contains("holds " + REGION),
                r.message());
        InOrder order = inOrder(region.mock, peer.communicator());
        order.verify(region.mock).close();
        order.verify(peer.communicator()).write(any());
    }

    @Test
    void writeNotificationBeyondTheAnnouncedTotalIsABadFrame() throws IOException {
        ScriptedPeer peer = new ScriptedPeer(ScriptedPeer.concat(SessionRequest.oneSidedWrite(50).encode(), notify(60)),
                Integer.MAX_VALUE);
        FakeRegion.stub(peer, new byte[50]);

        dispatcher.serve(peer.communicator());

        ByteBuffer out = peer.written();
        Wire.reply(out);
        Wire.result(out);
        assertEquals(SessionStatus.BAD_FRAME, Wire.result(out).status());
    }

    @Test
    void somethingElseThanANotificationIsABadFrameNamingWhatArrived() throws IOException {
        ScriptedPeer peer = new ScriptedPeer(ScriptedPeer.concat(SessionRequest.oneSidedWrite(50).encode(),
                ByteBuffer.wrap("GARBAGE!".getBytes(StandardCharsets.US_ASCII))), Integer.MAX_VALUE);
        FakeRegion.stub(peer, new byte[50]);

        dispatcher.serve(peer.communicator());

        ByteBuffer out = peer.written();
        Wire.reply(out);
        Wire.result(out);
        ExchangeResult r = Wire.result(out);
        assertEquals(SessionStatus.BAD_FRAME, r.status());
        assertTrue(r.message().contains("0x47415242"), r.message());
    }

    @Test
    void writeThatEndsMidNotificationIsAnsweredTruncated() throws IOException {
        ScriptedPeer peer = new ScriptedPeer(ScriptedPeer.concat(SessionRequest.oneSidedWrite(50).encode(),
                ByteBuffer.wrap(new byte[] {0x52, 0x43, 0x57})), Integer.MAX_VALUE);
        FakeRegion region = FakeRegion.stub(peer, new byte[50]);

        dispatcher.serve(peer.communicator());

        ByteBuffer out = peer.written();
        Wire.reply(out);
        Wire.result(out);
        ExchangeResult r = Wire.result(out);
        assertEquals(SessionStatus.TRUNCATED, r.status());
        assertTrue(r.message().contains("3 of 8 bytes"), r.message());
        verify(region.mock).close();
    }

    @Test
    void registrationRefusedByTheTransportIsReportedAsFailed() throws IOException {
        ScriptedPeer peer = new ScriptedPeer(ScriptedPeer.concat(SessionRequest.oneSidedWrite(50).encode()),
                Integer.MAX_VALUE);
        when(peer.communicator().register(any(), any()))
                .thenThrow(new CommunicatorException("would exceed maxRegistered=1k"));

        dispatcher.serve(peer.communicator());

        ByteBuffer out = peer.written();
        Wire.reply(out);
        ExchangeResult r = Wire.result(out);
        assertEquals(SessionStatus.FAILED, r.status());
        assertTrue(r.message().contains("maxRegistered=1k"), r.message());
    }

    // ---- READ ----------------------------------------------------------------------------------------------

    @Test
    void readAdvertisesAReadOnlyRegionWithThePatternAndReleasesItWhenTheClientIsDone() throws IOException {
        ScriptedPeer peer = new ScriptedPeer(ScriptedPeer.concat(SessionRequest.oneSidedRead().encode(),
                ByteBuffer.allocate(4).putInt(SessionProtocol.READ_DONE_MAGIC).flip()), Integer.MAX_VALUE);
        FakeRegion region = FakeRegion.stub(peer, null);

        dispatcher.serve(peer.communicator());

        assertEquals(EnumSet.of(Access.REMOTE_READ), region.access);
        assertEquals(REGION, region.capacity);
        for (int i = 0; i < REGION; i++) {
            assertEquals((byte) ((i * 31 + 7) & 0xff), region.registered.get(i), "byte " + i);
        }
        ByteBuffer out = peer.written();
        Wire.reply(out);
        assertEquals(region.descriptor, RegionDescriptor.readFrom(Wire.result(out).body()));
        assertEquals(ExchangeResult.ok(ByteBuffer.allocate(0)), Wire.result(out));
        assertEquals(0, out.remaining());
        // deregistered before the last result, while the client still waits for it
        InOrder order = inOrder(peer.communicator(), region.mock);
        order.verify(peer.communicator()).read(any());
        order.verify(region.mock).close();
        order.verify(peer.communicator()).write(any());
        order.verify(peer.communicator()).close();
    }

    @Test
    void readEndedWithSomethingElseThanDoneIsABadFrame() throws IOException {
        ScriptedPeer peer = new ScriptedPeer(ScriptedPeer.concat(SessionRequest.oneSidedRead().encode(),
                ByteBuffer.wrap("DONE".getBytes(StandardCharsets.US_ASCII))), Integer.MAX_VALUE);
        FakeRegion region = FakeRegion.stub(peer, null);

        dispatcher.serve(peer.communicator());

        ByteBuffer out = peer.written();
        Wire.reply(out);
        Wire.result(out);
        ExchangeResult r = Wire.result(out);
        assertEquals(SessionStatus.BAD_FRAME, r.status());
        assertTrue(r.message().contains("got 0x444f4e45"), r.message());
        verify(region.mock).close();
    }

    // ---- CALL ----------------------------------------------------------------------------------------------

    @Test
    void callRunsTheRoutineAndPutsItsOutputIntoTheClientsRegion() throws IOException {
        RegionDescriptor output = new RegionDescriptor(0x1000, 64, EnumSet.of(Access.REMOTE_WRITE), new byte[] {9});
        ScriptedPeer peer = new ScriptedPeer(call("upper", output, "hello, gvirtus"), 3);
        ArgumentCaptor<ByteBuffer> put = ArgumentCaptor.forClass(ByteBuffer.class);
        byte[][] placed = new byte[1][];
        doAnswer(inv -> {
            ByteBuffer src = inv.getArgument(0);
            placed[0] = new byte[src.remaining()];
            src.get(placed[0]);
            return null;
        }).when(peer.communicator()).put(put.capture(), eq(output), eq(0L));

        dispatcher.serve(peer.communicator());

        assertEquals("HELLO, GVIRTUS", new String(placed[0], StandardCharsets.UTF_8));
        ByteBuffer out = peer.written();
        Wire.reply(out);
        ExchangeResult r = Wire.result(out);
        assertEquals(SessionStatus.OK, r.status());
        assertEquals(0, r.body().getInt(0));
        assertEquals(placed[0].length, r.body().getInt(4));
        InOrder order = inOrder(peer.communicator());
        order.verify(peer.communicator()).put(any(), eq(output), eq(0L));
        order.verify(peer.communicator()).write(any());
        order.verify(peer.communicator()).sync();
    }

    @Test
    void unknownRoutineIsRefusedListingTheKnownOnes() throws IOException {
        ScriptedPeer peer = new ScriptedPeer(ScriptedPeer.concat(SessionRequest.call("rm-rf", 0).encode()),
                Integer.MAX_VALUE);

        dispatcher.serve(peer.communicator());

        SessionReply reply = Wire.reply(peer.written());
        assertEquals(SessionStatus.UNKNOWN_ROUTINE, reply.status());
        assertEquals("unknown routine 'rm-rf'; this server has: echo, sha256, sum, upper", reply.message());
        verify(peer.communicator(), never()).put(any(), any(), anyLong());
    }

    @Test
    void routineThatRefusesItsInputExitsWithCode1AndItsReason() throws IOException {
        RegionDescriptor output = new RegionDescriptor(1, 64, EnumSet.of(Access.REMOTE_WRITE), new byte[] {1});
        ScriptedPeer peer = new ScriptedPeer(call("sum", output, "1 2 three"), Integer.MAX_VALUE);

        dispatcher.serve(peer.communicator());

        ByteBuffer out = peer.written();
        Wire.reply(out);
        ExchangeResult r = Wire.result(out);
        assertEquals(SessionStatus.OK, r.status());
        assertEquals(1, r.body().getInt(0));
        assertEquals(0, r.body().getInt(4));
        assertTrue(r.message().contains("'three'"), r.message());
        verify(peer.communicator(), never()).put(any(), any(), anyLong());
    }

    @Test
    void outputLargerThanTheClientsRegionIsRefusedWithoutAPut() throws IOException {
        RegionDescriptor output = new RegionDescriptor(1, 10, EnumSet.of(Access.REMOTE_WRITE), new byte[] {1});
        ScriptedPeer peer = new ScriptedPeer(call("echo", output, "more than ten bytes"), Integer.MAX_VALUE);

        dispatcher.serve(peer.communicator());

        ByteBuffer out = peer.written();
        Wire.reply(out);
        ExchangeResult r = Wire.result(out);
        assertEquals(SessionStatus.OUTPUT_TOO_LARGE, r.status());
        assertTrue(r.message().contains("19 bytes") && r.message().contains("holds 10"), r.message());
        verify(peer.communicator(), never()).put(any(), any(), anyLong());
    }

    @Test
    void outputRegionWithoutRemoteWriteIsABadFrame() throws IOException {
        RegionDescriptor output = new RegionDescriptor(1, 64, EnumSet.of(Access.REMOTE_READ), new byte[] {1});
        ScriptedPeer peer = new ScriptedPeer(call("echo", output, "x"), Integer.MAX_VALUE);

        dispatcher.serve(peer.communicator());

        ByteBuffer out = peer.written();
        Wire.reply(out);
        ExchangeResult r = Wire.result(out);
        assertEquals(SessionStatus.BAD_FRAME, r.status());
        assertTrue(r.message().contains("REMOTE_WRITE"), r.message());
    }

    @Test
    void garbageInsteadOfADescriptorIsABadFrame() throws IOException {
        ByteBuffer frame = ByteBuffer.allocate(2 + 30).putShort((short) 30).put(new byte[30]).flip();
        ScriptedPeer peer = new ScriptedPeer(ScriptedPeer.concat(SessionRequest.call("echo", 0).encode(), frame),
                Integer.MAX_VALUE);

        dispatcher.serve(peer.communicator());

        ByteBuffer out = peer.written();
        Wire.reply(out);
        ExchangeResult r = Wire.result(out);
        assertEquals(SessionStatus.BAD_FRAME, r.status());
        assertTrue(r.message().contains("not a region descriptor"), r.message());
    }

    @Test
    void oversizedDescriptorLengthIsABadFrameAndTheRoutineDoesNotRun() throws IOException {
        ByteBuffer frame = ByteBuffer.allocate(2).putShort((short) 60000).flip();
        ScriptedPeer peer = new ScriptedPeer(ScriptedPeer.concat(SessionRequest.call("echo", 0).encode(), frame,
                ByteBuffer.allocate(100)), Integer.MAX_VALUE);

        dispatcher.serve(peer.communicator());

        ByteBuffer out = peer.written();
        Wire.reply(out);
        ExchangeResult r = Wire.result(out);
        assertEquals(SessionStatus.BAD_FRAME, r.status());
        assertTrue(r.message().contains("60000"), r.message());
        assertEquals(0, out.remaining(), "nothing after the error");
        verify(peer.communicator(), never()).put(any(), any(), anyLong());
    }

    @Test
    void truncatedInputIsAnsweredTruncated() throws IOException {
        RegionDescriptor output = new RegionDescriptor(1, 64, EnumSet.of(Access.REMOTE_WRITE), new byte[] {1});
        byte[] script = call("echo", output, "abcdef");
        ScriptedPeer peer = new ScriptedPeer(java.util.Arrays.copyOf(script, script.length - 2), Integer.MAX_VALUE);

        dispatcher.serve(peer.communicator());

        ByteBuffer out = peer.written();
        Wire.reply(out);
        ExchangeResult r = Wire.result(out);
        assertEquals(SessionStatus.TRUNCATED, r.status());
        assertTrue(r.message().contains("4 of 6 bytes"), r.message());
    }

    // ---- helpers -------------------------------------------------------------------------------------------

    private static ByteBuffer notify(int length) {
        return ByteBuffer.allocate(8).putInt(SessionProtocol.WRITE_NOTIFY_MAGIC).putInt(length).flip();
    }

    private static byte[] call(String routine, RegionDescriptor output, String input) {
        byte[] in = input.getBytes(StandardCharsets.UTF_8);
        byte[] d = output.toBytes();
        return ScriptedPeer.concat(SessionRequest.call(routine, in.length).encode(),
                ByteBuffer.allocate(2).putShort((short) d.length).flip(), ByteBuffer.wrap(d), ByteBuffer.wrap(in));
    }

    /** A registration stubbed on a mock peer: records what was registered and returns a mock region. */
    static final class FakeRegion {
        final MemoryRegion mock = mock(MemoryRegion.class);
        final RegionDescriptor descriptor = new RegionDescriptor(0x2000, 0, Set.of(Access.REMOTE_WRITE),
                new byte[] {4, 2});
        Set<Access> access;
        int capacity;
        ByteBuffer registered;

        /** Stubs {@code register}; {@code placed}, when given, is copied into the memory as a peer's put would. */
        static FakeRegion stub(ScriptedPeer peer, byte[] placed) throws IOException {
            FakeRegion r = new FakeRegion();
            when(peer.communicator().register(any(), any())).thenAnswer(inv -> {
                ByteBuffer memory = inv.getArgument(0);
                r.access = inv.getArgument(1);
                r.capacity = memory.remaining();
                r.registered = memory.duplicate();
                if (placed != null) {
                    memory.duplicate().put(placed, 0, Math.min(placed.length, memory.remaining()));
                }
                when(r.mock.buffer()).thenReturn(memory.duplicate());
                when(r.mock.descriptor()).thenReturn(r.descriptor);
                return r.mock;
            });
            return r;
        }
    }
}
