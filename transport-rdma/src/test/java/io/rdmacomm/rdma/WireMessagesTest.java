package io.rdmacomm.rdma;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmacomm.api.Access;
import io.rdmacomm.api.HandshakeException;
import io.rdmacomm.api.RegionDescriptor;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.util.EnumSet;
import java.util.HexFormat;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.function.Executable;

/**
 * Every wire message byte for byte against hand-written bytes, decoded from inside a larger buffer (as providers
 * deliver them), and refused with the message and the field named when truncated or garbled.
 */
@Timeout(30)
class WireMessagesTest {
    /** A descriptor with a 4-byte key: address 0x1000, 4096 bytes, remote write. */
    private static final RegionDescriptor REGION = new RegionDescriptor(0x1000, 4096,
            EnumSet.of(Access.REMOTE_WRITE), new byte[] {0, 0, 0, 5});
    private static final String REGION_BYTES =
            "52 44 01 02 | 00 00 00 00 00 00 10 00 | 00 00 00 00 00 00 10 00 | 00 04 | 00 00 00 05";

    /** Bytes written as hex pairs; spaces and bars are for the reader. */
    private static byte[] hex(String s) {
        return HexFormat.of().parseHex(s.replace(" ", "").replace("|", ""));
    }

    private static byte[] bytes(ByteBuffer encoded) {
        assertEquals(0, encoded.position(), "an encoded message starts at index 0");
        byte[] b = new byte[encoded.remaining()];
        encoded.duplicate().get(b);
        return b;
    }

    /** The bytes as a provider hands them over: inside a larger buffer, at a position other than 0. */
    private static ByteBuffer received(byte[] message) {
        ByteBuffer b = ByteBuffer.allocate(message.length + 7);
        b.put(3, message);
        return b.position(3).limit(3 + message.length);
    }

    private static ByteBuffer received(String hex) {
        return received(hex(hex));
    }

    private static void assertMalformed(String type, String reason, Executable decode) {
        MalformedMessageException e = assertThrows(MalformedMessageException.class, decode);
        assertEquals(type, e.typeName());
        assertTrue(e.getMessage().contains(reason), "'" + e.getMessage() + "' should contain '" + reason + "'");
    }

    // ---- HELLO -------------------------------------------------------------------------------------------------

    @Test
    void hello() throws Exception {
        byte[] expected = hex("01 | 52 44 4d 43 | 00 02 | 00 00 27 10 | " + REGION_BYTES);
        assertEquals(expected.length, HelloMessage.length(REGION));
        assertArrayEquals(expected, bytes(HelloMessage.encode(ByteBuffer.allocate(64), REGION,
                TimeUnit.SECONDS.toNanos(10))));
        assertEquals(REGION, HelloMessage.ring(received(expected), "peer"));
        assertEquals(TimeUnit.SECONDS.toNanos(10), HelloMessage.heartbeat(received(expected)));
        byte[] none = hex("01 | 52 44 4d 43 | 00 02 | 00 00 00 00 | " + REGION_BYTES);
        assertArrayEquals(none, bytes(HelloMessage.encode(ByteBuffer.allocate(64), REGION, 0)));
        assertEquals(0, HelloMessage.heartbeat(received(none)));
    }

    @Test
    void helloThatIsNot() {
        HandshakeException truncated = assertThrows(HandshakeException.class,
                () -> HelloMessage.ring(received("01 52 44 4d 43 00"), "peer"));
        assertTrue(truncated.getMessage().contains("expected an rdmacomm HELLO"), truncated.getMessage());
        assertTrue(truncated.getMessage().contains("6 bytes 01 52 44 4d 43 00"), truncated.getMessage());
        HandshakeException magic = assertThrows(HandshakeException.class,
                () -> HelloMessage.ring(received("01 52 44 4d 44 00 02 00 00 00 00 " + REGION_BYTES), "peer"));
        assertTrue(magic.getMessage().contains("got 0x52444d44"), magic.getMessage());
        HandshakeException version = assertThrows(HandshakeException.class,
                () -> HelloMessage.ring(received("01 52 44 4d 43 00 01 " + REGION_BYTES), "peer"));
        assertTrue(version.getMessage().contains("protocol version 1, expected 2"), version.getMessage());
        HandshakeException trailing = assertThrows(HandshakeException.class,
                () -> HelloMessage.ring(received("01 52 44 4d 43 00 02 00 00 00 00 " + REGION_BYTES + " ff"), "peer"));
        assertTrue(trailing.getMessage().contains("1 bytes after the ring descriptor"), trailing.getMessage());
        HandshakeException garbage = assertThrows(HandshakeException.class,
                () -> HelloMessage.ring(received("01 52 44 4d 43 00 02 00 00 00 00 ff ff"), "peer"));
        assertTrue(garbage.getMessage().contains("bad ring descriptor"), garbage.getMessage());
    }

    // ---- DATA and DATA_INLINE ------------------------------------------------------------------------------------

    @Test
    void data() throws Exception {
        byte[] expected = hex("02 | 00 00 00 00 00 01 00 00 | 00 00 00 00 00 00 20 10 | 00 00 00 30");
        assertArrayEquals(expected, bytes(DataMessage.encodeData(ByteBuffer.allocate(64), 0x10000, 0x2010, 0x30)));
        ByteBuffer m = received(expected);
        DataMessage.check(m, 0x1000);
        assertEquals(0x10000, DataMessage.streamPosition(m));
        assertEquals(0x2010, DataMessage.ringCursor(m));
        assertEquals(0x30, DataMessage.length(m));
    }

    @Test
    void dataThatIsNot() {
        String header = "02 | 00 00 00 00 00 00 00 00 | 00 00 00 00 00 00 00 00 | 00 00 00 10";
        assertMalformed("DATA", "20 bytes, expected 21", () -> DataMessage.check(received(header + "").limit(23), 64));
        assertMalformed("DATA", "22 bytes, expected 21", () -> DataMessage.check(received(header + " 00"), 64));
        assertMalformed("DATA", "negative stream position -1", () -> DataMessage.check(
                received("02 | ff ff ff ff ff ff ff ff | 00 00 00 00 00 00 00 00 | 00 00 00 10"), 64));
        assertMalformed("DATA", "ring segment of 16 bytes at cursor 56 outside the 64-byte ring", () -> DataMessage
                .check(received("02 | 00 00 00 00 00 00 00 00 | 00 00 00 00 00 00 00 38 | 00 00 00 10"), 64));
        assertMalformed("DATA", "ring segment of 0 bytes", () -> DataMessage.check(
                received("02 | 00 00 00 00 00 00 00 00 | 00 00 00 00 00 00 00 00 | 00 00 00 00"), 64));
        assertMalformed("DATA", "at cursor -8", () -> DataMessage.check(
                received("02 | 00 00 00 00 00 00 00 00 | ff ff ff ff ff ff ff f8 | 00 00 00 01"), 64));
    }

    @Test
    void dataInline() throws Exception {
        byte[] expected = hex("0c | 00 00 00 00 00 00 00 07 | 00 00 00 00 00 00 00 05 | 00 00 00 03 | bb cc dd");
        ByteBuffer staging = ByteBuffer.wrap(hex("aa bb cc dd ee"));
        assertArrayEquals(expected, bytes(DataMessage.encodeInline(ByteBuffer.allocate(64), 7, 5, staging, 1, 3)));
        assertEquals(0, staging.position(), "the source is read by index");
        ByteBuffer m = received(expected);
        DataMessage.check(m, 64);
        assertEquals(7, DataMessage.streamPosition(m));
        assertEquals(5, DataMessage.ringCursor(m));
        assertEquals(3, DataMessage.length(m));
        assertEquals((byte) 0xbb, m.get(DataMessage.bytesIndex(m)));
    }

    @Test
    void dataInlineThatIsNot() {
        String header = "0c | 00 00 00 00 00 00 00 00 | 00 00 00 00 00 00 00 00 | 00 00 00 03";
        assertMalformed("DATA_INLINE", "length 3 but carries 2 bytes",
                () -> DataMessage.check(received(header + " 01 02"), 64));
        assertMalformed("DATA_INLINE", "length 3 but carries 4 bytes",
                () -> DataMessage.check(received(header + " 01 02 03 04"), 64));
        assertMalformed("DATA_INLINE", "20 bytes, expected at least 21",
                () -> DataMessage.check(received(header).limit(23), 64));
    }

    // ---- CREDIT, ZDATA, CANCEL, CANCEL_ACK, CLOSE, REVOKE, ACK ---------------------------------------------------

    @Test
    void credit() throws Exception {
        byte[] expected = hex("03 | 00 00 00 01 00 00 00 00");
        assertArrayEquals(expected, bytes(CreditMessage.encode(ByteBuffer.allocate(64), 1L << 32)));
        ByteBuffer m = received(expected);
        CreditMessage.check(m);
        assertEquals(1L << 32, CreditMessage.ringConsumed(m));
        assertMalformed("CREDIT", "8 bytes, expected 9", () -> CreditMessage.check(received("03 00 00 00 00 00 00 01")));
        assertMalformed("CREDIT", "negative ring bytes consumed",
                () -> CreditMessage.check(received("03 80 00 00 00 00 00 00 00")));
    }

    @Test
    void zeroCopyData() throws Exception {
        byte[] expected = hex("05 | 00 00 00 09 | 00 00 00 00 00 00 40 00 | 00 01 00 00");
        assertArrayEquals(expected, bytes(ZeroCopyDataMessage.encode(ByteBuffer.allocate(64), 9, 0x4000, 0x10000)));
        ByteBuffer m = received(expected);
        ZeroCopyDataMessage.check(m);
        assertEquals(9, ZeroCopyDataMessage.seq(m));
        assertEquals(0x4000, ZeroCopyDataMessage.streamPosition(m));
        assertEquals(0x10000, ZeroCopyDataMessage.length(m));
        assertMalformed("ZDATA", "16 bytes, expected 17",
                () -> ZeroCopyDataMessage.check(received("05 00 00 00 09 00 00 00 00 00 00 40 00 00 01 00")));
        assertMalformed("ZDATA", "length 0, expected at least 1",
                () -> ZeroCopyDataMessage.check(received("05 00 00 00 09 00 00 00 00 00 00 40 00 00 00 00 00")));
        assertMalformed("ZDATA", "negative stream position",
                () -> ZeroCopyDataMessage.check(received("05 00 00 00 09 ff 00 00 00 00 00 40 00 00 00 00 01")));
    }

    @Test
    void cancelAndCancelAck() throws Exception {
        byte[] cancel = hex("06 | ff ff ff fe");
        assertArrayEquals(cancel, bytes(CancelMessage.encode(ByteBuffer.allocate(64), CancelMessage.CANCEL, -2)));
        CancelMessage.check(received(cancel));
        assertEquals(-2, CancelMessage.seq(received(cancel)));
        byte[] ack = hex("07 | 00 00 01 00");
        assertArrayEquals(ack, bytes(CancelMessage.encode(ByteBuffer.allocate(64), CancelMessage.CANCEL_ACK, 256)));
        CancelMessage.check(received(ack));
        assertEquals(256, CancelMessage.seq(received(ack)));
        assertMalformed("CANCEL", "4 bytes, expected 5", () -> CancelMessage.check(received("06 00 00 01")));
        assertMalformed("CANCEL_ACK", "6 bytes, expected 5", () -> CancelMessage.check(received("07 00 00 01 00 00")));
    }

    @Test
    void close() throws Exception {
        byte[] expected = hex("08 | 00 00 00 00 12 34 56 78");
        assertArrayEquals(expected, bytes(CloseMessage.encode(ByteBuffer.allocate(64), 0x12345678L)));
        CloseMessage.check(received(expected));
        assertEquals(0x12345678L, CloseMessage.finalPosition(received(expected)));
        assertMalformed("CLOSE", "1 bytes, expected 9", () -> CloseMessage.check(received("08")));
        assertMalformed("CLOSE", "negative final stream position",
                () -> CloseMessage.check(received("08 ff ff ff ff ff ff ff ff")));
    }

    @Test
    void revoke() throws Exception {
        byte[] expected = hex("0a | 00 00 00 05");
        assertArrayEquals(expected, bytes(RevokeMessage.encode(ByteBuffer.allocate(64), 5)));
        RevokeMessage.check(received(expected));
        assertEquals(5, RevokeMessage.regionId(received(expected)));
        assertMalformed("REVOKE", "3 bytes, expected 5", () -> RevokeMessage.check(received("0a 00 00")));
    }

    @Test
    void heartbeat() throws Exception {
        byte[] expected = hex("0d");
        assertArrayEquals(expected, bytes(HeartbeatMessage.encode(ByteBuffer.allocate(64))));
        HeartbeatMessage.check(received(expected));
        assertMalformed("HEARTBEAT", "2 bytes, expected 1", () -> HeartbeatMessage.check(received("0d 00")));
    }

    @Test
    void ack() throws Exception {
        byte[] announce = hex("0b | 09 | 00 00 00 05");
        assertArrayEquals(announce, bytes(AckMessage.encode(ByteBuffer.allocate(64), AnnounceMessage.TYPE, 5)));
        AckMessage.check(received(announce));
        assertEquals(AnnounceMessage.TYPE, AckMessage.acknowledged(received(announce)));
        assertEquals(5, AckMessage.regionId(received(announce)));
        byte[] close = hex("0b | 08 | 00 00 00 00");
        assertArrayEquals(close, bytes(AckMessage.encode(ByteBuffer.allocate(64), CloseMessage.TYPE, 0)));
        AckMessage.check(received(close));
        AckMessage.check(received("0b 0a 00 00 00 07"));
        assertMalformed("ACK", "acknowledged type 3, expected ANNOUNCE 9, REVOKE 10, CLOSE 8 or PUT_PLACED 16",
                () -> AckMessage.check(received("0b 03 00 00 00 05")));
        assertMalformed("ACK", "region id 7 with CLOSE, expected 0",
                () -> AckMessage.check(received("0b 08 00 00 00 07")));
        assertMalformed("ACK", "5 bytes, expected 6", () -> AckMessage.check(received("0b 09 00 00 00")));
    }

    // ---- ADVERT and ANNOUNCE -------------------------------------------------------------------------------------

    @Test
    void advert() throws Exception {
        byte[] expected = hex("04 | 00 00 00 02 | 00 00 00 00 00 00 03 00 | 00 00 00 00 00 00 00 40"
                + " | 00 00 00 00 00 00 10 10 | 00 00 0f 00 | " + REGION_BYTES);
        AdvertMessage a = new AdvertMessage(2, 0x300, 0x40, 0x1010, 0xf00, REGION);
        assertEquals(expected.length, a.encodedLength());
        assertArrayEquals(expected, bytes(a.encode(ByteBuffer.allocate(128))));
        assertEquals(a, AdvertMessage.decode(received(expected)));
    }

    @Test
    void advertThatIsNot() {
        String head = "04 | 00 00 00 02 | 00 00 00 00 00 00 03 00 | 00 00 00 00 00 00 00 40 | 00 00 00 00 00 00 10 10";
        assertMalformed("ADVERT", "32 bytes, expected at least 33",
                () -> AdvertMessage.decode(received(head + " 00 00 0f")));
        assertMalformed("ADVERT", "length 0, expected at least 1",
                () -> AdvertMessage.decode(received(head + " 00 00 00 00 " + REGION_BYTES)));
        assertMalformed("ADVERT", "4081 bytes at address 0x1010 outside the advertised region",
                () -> AdvertMessage.decode(received(head + " 00 00 0f f1 " + REGION_BYTES)));
        assertMalformed("ADVERT", "bad region descriptor: not a region descriptor: magic 0x5245",
                () -> AdvertMessage.decode(received(head + " 00 00 0f 00 52 45 " + REGION_BYTES.substring(6))));
        assertMalformed("ADVERT", "2 bytes after the region descriptor",
                () -> AdvertMessage.decode(received(head + " 00 00 0f 00 " + REGION_BYTES + " 00 00")));
        assertMalformed("ADVERT", "negative ring bytes consumed", () -> AdvertMessage.decode(received(
                "04 00 00 00 02 00 00 00 00 00 00 03 00 ff 00 00 00 00 00 00 40 00 00 00 00 00 00 10 10 00 00 0f 00 "
                        + REGION_BYTES)));
    }

    @Test
    void announce() throws Exception {
        byte[] expected = hex("09 | 00 00 00 05 | " + REGION_BYTES);
        AnnounceMessage a = new AnnounceMessage(5, REGION);
        assertEquals(expected.length, a.encodedLength());
        assertArrayEquals(expected, bytes(a.encode(ByteBuffer.allocate(64))));
        assertEquals(a, AnnounceMessage.decode(received(expected)));
        assertMalformed("ANNOUNCE", "region id 6 is not the start of the key",
                () -> AnnounceMessage.decode(received("09 00 00 00 06 " + REGION_BYTES)));
        assertMalformed("ANNOUNCE", "4 bytes, expected at least 5",
                () -> AnnounceMessage.decode(received("09 00 00 00")));
        RegionDescriptor shortKey = new RegionDescriptor(0x1000, 4096, EnumSet.of(Access.REMOTE_READ), new byte[2]);
        assertMalformed("ANNOUNCE", "region id 0 is not the start of the key",
                () -> AnnounceMessage.decode(received(bytes(new AnnounceMessage(0, shortKey).encode(ByteBuffer.allocate(64))))));
    }

    // ---- GET_REQ and GET_DONE ----------------------------------------------------------------------------------

    @Test
    void getRequest() throws Exception {
        byte[] expected = hex("0e | 00 00 00 07 | 00 00 00 05 | 00 00 00 00 00 00 01 00 | 00 00 02 00"
                + " | 00 00 00 00 00 00 10 20 | " + REGION_BYTES);
        GetRequestMessage g = new GetRequestMessage(7, 5, 0x100, 0x200, 0x1020, REGION);
        assertEquals(expected.length, g.encodedLength());
        assertArrayEquals(expected, bytes(g.encode(ByteBuffer.allocate(128))));
        assertEquals(g, GetRequestMessage.decode(received(expected)));
    }

    @Test
    void getRequestThatIsNot() {
        String head = "0e | 00 00 00 07 | 00 00 00 05 | ";
        String dst = " | 00 00 00 00 00 00 10 20 | ";
        assertMalformed("GET_REQ", "24 bytes, expected at least 29",
                () -> GetRequestMessage.decode(received(head + "00 00 00 00 00 00 01 00 | 00 00 02 00 | 00 00 00")));
        assertMalformed("GET_REQ", "negative offset", () -> GetRequestMessage.decode(
                received(head + "80 00 00 00 00 00 00 00 | 00 00 02 00" + dst + REGION_BYTES)));
        assertMalformed("GET_REQ", "length -1, expected at least 1", () -> GetRequestMessage.decode(
                received(head + "00 00 00 00 00 00 01 00 | ff ff ff ff" + dst + REGION_BYTES)));
        assertMalformed("GET_REQ", "4065 bytes at address 0x1020 outside the destination's registration",
                () -> GetRequestMessage.decode(received(head + "00 00 00 00 00 00 01 00 | 00 00 0f e1" + dst
                        + REGION_BYTES)));
        assertMalformed("GET_REQ", "1 bytes after the destination descriptor", () -> GetRequestMessage.decode(
                received(head + "00 00 00 00 00 00 01 00 | 00 00 02 00" + dst + REGION_BYTES + " 00")));
    }

    @Test
    void getDone() throws Exception {
        byte[] done = hex("0f | 00 00 00 07 | 00");
        assertArrayEquals(done, bytes(GetDoneMessage.encodeDone(ByteBuffer.allocate(16), 7)));
        assertEquals(new GetDoneMessage(7, null), GetDoneMessage.decode(received(done)));
        byte[] refused = hex("0f | 00 00 00 08 | 01 | 6e 6f c3 a9");
        assertArrayEquals(refused, bytes(GetDoneMessage.encodeRefused(8, "no\u00e9")));
        assertEquals(new GetDoneMessage(8, "no\u00e9"), GetDoneMessage.decode(received(refused)));
        // a long reason is cut at a character boundary, never inside one
        String reason = "x" + "\u00e9".repeat(GetDoneMessage.MAX_REASON);
        ByteBuffer cut = GetDoneMessage.encodeRefused(9, reason);
        assertEquals(GetDoneMessage.REASON_OFFSET + GetDoneMessage.MAX_REASON - 1, cut.remaining());
        assertEquals(reason.substring(0, GetDoneMessage.MAX_REASON / 2), GetDoneMessage.decode(cut).refusal());
    }

    @Test
    void putPlaced() throws Exception {
        byte[] expected = hex("10 | 00 00 00 07");
        assertArrayEquals(expected, bytes(PutPlacedMessage.encode(ByteBuffer.allocate(16), 7)));
        PutPlacedMessage.check(received(expected));
        assertEquals(7, PutPlacedMessage.seq(received(expected)));
        assertMalformed("PUT_PLACED", "4 bytes, expected 5", () -> PutPlacedMessage.check(received("10 00 00 00")));
        AckMessage.check(received("0b 10 00 00 00 07"));
    }

    @Test
    void getDoneThatIsNot() {
        assertMalformed("GET_DONE", "5 bytes, expected at least 6",
                () -> GetDoneMessage.decode(received("0f 00 00 00 07")));
        assertMalformed("GET_DONE", "7 bytes, expected 6", () -> GetDoneMessage.decode(received("0f 00 00 00 07 00 41")));
        assertMalformed("GET_DONE", "status 2, expected 0 or 1",
                () -> GetDoneMessage.decode(received("0f 00 00 00 07 02 41")));
        assertMalformed("GET_DONE", "a 0 byte reason", () -> GetDoneMessage.decode(received("0f 00 00 00 07 01")));
        assertMalformed("GET_DONE", "a reason that is not UTF-8",
                () -> GetDoneMessage.decode(received("0f 00 00 00 07 01 c3")));
    }

    // ---- types -----------------------------------------------------------------------------------------------------

    @Test
    void everyTypeHasItsCodeAndName() throws Exception {
        String[] names = {"HELLO", "DATA", "CREDIT", "ADVERT", "ZDATA", "CANCEL", "CANCEL_ACK", "CLOSE", "ANNOUNCE",
            "REVOKE", "ACK", "DATA_INLINE", "HEARTBEAT", "GET_REQ", "GET_DONE", "PUT_PLACED"};
        for (int code = 1; code <= names.length; code++) {
            assertEquals(names[code - 1], Wire.name((byte) code));
            assertEquals(code, Wire.type(received(new byte[] {(byte) code})));
        }
        assertEquals("type 99", Wire.name((byte) 99));
        assertMalformed("type 0", "empty message", () -> Wire.type(received(new byte[0])));
    }

    // ---- the hot path ------------------------------------------------------------------------------------------------

    @Test
    void dataDataInlineAndCreditAreEncodedAndReadWithoutAllocating() throws Exception {
        com.sun.management.ThreadMXBean mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        ByteBuffer scratch = ByteBuffer.allocate(DataMessage.HEADER_LENGTH + 1024);
        ByteBuffer staging = ByteBuffer.allocateDirect(4096);
        ByteBuffer ring = ByteBuffer.allocateDirect(4096);
        long sum = 0;
        // the least of three measured rounds: the JVM allocates now and then on its own (a few hundred bytes)
        long least = Long.MAX_VALUE;
        for (int round = 0; round < 4; round++) {
            long before = mx.getCurrentThreadAllocatedBytes();
            for (int i = 0; i < 100_000; i++) {
                int n = 1 + (i & 511);
                ByteBuffer m = DataMessage.encodeInline(scratch, i, i & 1023, staging, i & 1023, n);
                DataMessage.check(m, ring.capacity());
                ring.put((int) (DataMessage.ringCursor(m) % ring.capacity()), m, DataMessage.bytesIndex(m), n);
                sum += DataMessage.streamPosition(m) + DataMessage.length(m);
                m = DataMessage.encodeData(scratch, i, i & 1023, n);
                DataMessage.check(m, ring.capacity());
                sum += DataMessage.ringCursor(m);
                m = CreditMessage.encode(scratch, i);
                CreditMessage.check(m);
                sum += CreditMessage.ringConsumed(m) + Wire.type(m);
            }
            if (round > 0) {
                least = Math.min(least, mx.getCurrentThreadAllocatedBytes() - before);
            }
        }
        assertTrue(least < 1024, least + " bytes allocated by 100 000 rounds of DATA_INLINE, DATA and CREDIT");
        assertTrue(sum > 0);
    }
}
