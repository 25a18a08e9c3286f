package io.rdmacomm.tcp;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmacomm.api.Access;
import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.CommunicatorException;
import io.rdmacomm.api.Communicators;
import io.rdmacomm.api.MemoryRegion;
import io.rdmacomm.api.RegionDescriptor;
import io.rdmacomm.api.RemoteAccessException;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.ToIntFunction;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The bytes on the wire, checked against a peer that speaks the format by hand. */
class WireFormatTest {
    private static final long OP = 0x1112131415161718L;
    private static final long KEY = 0x2122232425262728L;
    private static final long OFFSET = 0x3132333435363738L;
    private static final byte[] OP_BYTES = {0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18};
    private static final byte[] KEY_BYTES = {0x21, 0x22, 0x23, 0x24, 0x25, 0x26, 0x27, 0x28};
    private static final byte[] OFFSET_BYTES = {0x31, 0x32, 0x33, 0x34, 0x35, 0x36, 0x37, 0x38};

    private final ExecutorService helper = Executors.newSingleThreadExecutor();

    @AfterEach
    void stopHelper() throws InterruptedException {
        helper.shutdownNow();
        assertTrue(helper.awaitTermination(10, TimeUnit.SECONDS));
    }

    /** A communicator connected to a raw server socket, and that socket's accepted side. */
    private record Link(Communicator comm, SocketChannel raw, ServerSocketChannel listener) implements AutoCloseable {
        @Override
        public void close() throws java.io.IOException {
            comm.close();
            raw.close();
            listener.close();
        }
    }

    private Link connectToRaw(String options) throws Exception {
        ServerSocketChannel listener = Raw.listen();
        Future<SocketChannel> accepted = helper.submit(() -> {
            SocketChannel c = listener.accept();
            Raw.answerHandshake(c);
            return c;
        });
        Communicator comm = Communicators.connect("tcp://127.0.0.1:" + Raw.port(listener) + options);
        return new Link(comm, accepted.get(10, TimeUnit.SECONDS), listener);
    }

    private static byte[] ascii(String s) {
        return s.getBytes(StandardCharsets.US_ASCII);
    }

    @Test
    @Timeout(20)
    void smallWritesAreCoalescedIntoOneDataFrameUntilSync() throws Exception {
        try (Link l = connectToRaw("")) {
            l.comm().write(ByteBuffer.wrap(ascii("ab")));
            l.comm().write(ByteBuffer.wrap(ascii("cde")));
            l.comm().sync();
            assertArrayEquals(ascii("abcde"), Raw.readFrame(l.raw(), Wire.DATA));
            l.comm().write(ByteBuffer.wrap(ascii("f")));
            l.comm().sync();
            assertArrayEquals(ascii("f"), Raw.readFrame(l.raw(), Wire.DATA));
        }
    }

    @Test
    @Timeout(20)
    void aFullBufferIsSentAndLargeWritesGoOutAsOneFrameAfterWhatWasBuffered() throws Exception {
        try (Link l = connectToRaw("?sendBuffer=64")) {
            l.comm().write(ByteBuffer.wrap(ascii("x")));
            byte[] big = new byte[1000];
            Arrays.fill(big, (byte) 7);
            l.comm().write(ByteBuffer.allocateDirect(1000).put(big).flip());
            assertArrayEquals(ascii("x"), Raw.readFrame(l.raw(), Wire.DATA), "buffered byte first, without sync");
            assertArrayEquals(big, Raw.readFrame(l.raw(), Wire.DATA), "the large write as one frame");

            byte[] fills = new byte[63];
            l.comm().write(ByteBuffer.wrap(fills));
            l.comm().write(ByteBuffer.wrap(new byte[] {1, 2}));
            byte[] first = Raw.readFrame(l.raw(), Wire.DATA);
            assertEquals(64, first.length, "the buffer went out when full, without sync");
            l.comm().sync();
            assertArrayEquals(new byte[] {2}, Raw.readFrame(l.raw(), Wire.DATA));
        }
    }

    @Test
    @Timeout(20)
    void framesSplitAtEveryByteAreReassembled() throws Exception {
        try (Link l = connectToRaw("")) {
            ByteBuffer wire = ByteBuffer.allocate(64);
            wire.put(Raw.frame(Wire.DATA, ascii("hello "))).put(Raw.frame(Wire.DATA, ascii("world"))).flip();
            Future<?> trickle = helper.submit(() -> {
                while (wire.hasRemaining()) {
                    Raw.writeAll(l.raw(), ByteBuffer.wrap(new byte[] {wire.get()}));
                }
                l.raw().shutdownOutput();
                return null;
            });
            ByteBuffer got = ByteBuffer.allocate(11);
            l.comm().readFully(got);
            assertArrayEquals(ascii("hello world"), got.array());
            assertEquals(-1, l.comm().read(ByteBuffer.allocate(1)), "clean end of stream after whole frames");
            trickle.get(10, TimeUnit.SECONDS);
        }
    }

    @Test
    @Timeout(20)
    void anUnknownFrameTypeIsAProtocolErrorNamingIt() throws Exception {
        try (Link l = connectToRaw("")) {
            Raw.writeAll(l.raw(), Raw.frame((byte) 0x7f, new byte[3]));
            CommunicatorException e = assertThrows(CommunicatorException.class,
                    () -> l.comm().read(ByteBuffer.allocate(8)));
            assertTrue(e.getMessage().contains("0x7f") && e.getMessage().contains("127.0.0.1"), e.getMessage());
            Raw.writeAll(l.raw(), Raw.frame(Wire.DATA, ascii("late")));
            CommunicatorException again = assertThrows(CommunicatorException.class,
                    () -> l.comm().read(ByteBuffer.allocate(8)), "the framing is lost: bytes after it are not data");
            assertTrue(again.getMessage().contains("protocol violation"), again.getMessage());
        }
    }

    @Test
    @Timeout(20)
    void endOfStreamInsideAFrameIsAnErrorNotACleanEnd() throws Exception {
        try (Link l = connectToRaw("")) {
            ByteBuffer partial = ByteBuffer.allocate(8).put(Wire.DATA).putInt(100).put(ascii("abc")).flip();
            Raw.writeAll(l.raw(), partial);
            l.raw().shutdownOutput();
            ByteBuffer dst = ByteBuffer.allocate(100);
            CommunicatorException e = assertThrows(CommunicatorException.class, () -> l.comm().readFully(dst));
            assertTrue(e.getMessage().contains("middle of a frame"), e.getMessage());
            assertEquals(3, dst.position(), "the bytes before the cut were delivered");
        }
    }

    @Test
    @Timeout(20)
    void anEmptyDataFrameIsMalformed() throws Exception {
        try (Link l = connectToRaw("")) {
            Raw.writeAll(l.raw(), Raw.frame(Wire.DATA, new byte[0]));
            CommunicatorException e = assertThrows(CommunicatorException.class,
                    () -> l.comm().read(ByteBuffer.allocate(8)));
            assertTrue(e.getMessage().contains("DATA with length 0"), e.getMessage());
        }
    }

    @Test
    @Timeout(20)
    void closeDeliversUnsyncedBytesThenEndsTheStream() throws Exception {
        for (String options : new String[] {"", "?busyPoll=20us"}) {
            try (Link l = connectToRaw(options)) {
                l.comm().write(ByteBuffer.wrap(ascii("not synced")));
                l.comm().close();
                assertArrayEquals(ascii("not synced"), Raw.readFrame(l.raw(), Wire.DATA), options);
                assertEquals(-1, l.raw().read(ByteBuffer.allocate(1)), "FIN after the data " + options);
            }
        }
    }

    // ---- the flyweight and the handshake, byte for byte ----------------------------------------------------------

    /** The bytes of the arguments in order: byte arrays, and ints and chars as one byte each. */
    private static byte[] bytes(Object... parts) {
        ByteBuffer b = ByteBuffer.allocate(64);
        for (Object p : parts) {
            if (p instanceof byte[] a) {
                b.put(a);
            } else if (p instanceof Character c) {
                b.put((byte) c.charValue());
            } else {
                b.put(((Integer) p).byteValue());
            }
        }
        return Arrays.copyOf(b.array(), b.position());
    }

    /** Encodes at index 3 of a buffer, checks the position was left alone, returns the frame's bytes. */
    private static byte[] encoded(ToIntFunction<Wire.Frame> encode) {
        ByteBuffer b = ByteBuffer.allocate(64);
        int n = encode.applyAsInt(new Wire.Frame().wrap(b, 3));
        assertEquals(0, b.position(), "encoding writes by index");
        return Arrays.copyOfRange(b.array(), 3, 3 + n);
    }

    @Test
    @Timeout(10)
    void everyFrameEncodesToTheLayoutOfTheTable() {
        assertArrayEquals(bytes(1, 0x01, 0x02, 0x03, 0x04), encoded(f -> f.data(0x01020304)));
        assertArrayEquals(bytes(2, 0, 0, 0, 24 + 2, OP_BYTES, KEY_BYTES, OFFSET_BYTES),
                encoded(f -> f.put(OP, KEY, OFFSET, 2)));
        assertArrayEquals(bytes(3, 0, 0, 0, 28, OP_BYTES, KEY_BYTES, OFFSET_BYTES, 0x41, 0x42, 0x43, 0x44),
                encoded(f -> f.get(OP, KEY, OFFSET, 0x41424344)));
        assertArrayEquals(bytes(4, 0, 0, 0, 8 + 5, OP_BYTES), encoded(f -> f.getResponse(OP, 5)));
        assertArrayEquals(bytes(5, 0, 0, 0, 8, OP_BYTES), encoded(f -> f.ack(OP)));
        assertArrayEquals(bytes(6, 0, 0, 0, 8 + 2, OP_BYTES, 'n', 'o'),
                encoded(f -> f.error(OP, ascii("no!"), 2)));
        assertEquals(29, Wire.PUT_LENGTH);
        assertEquals(33, Wire.GET_LENGTH);
        assertEquals(13, Wire.OP_LENGTH);
    }

    @Test
    @Timeout(10)
    void theFlyweightReadsTheNamedFieldsWhereverTheFrameStarts() {
        ByteBuffer b = ByteBuffer.allocate(64).position(7);
        b.put(bytes(3, 0, 0, 0, 28, OP_BYTES, KEY_BYTES, OFFSET_BYTES, 0, 0, 1, 0)).position(0);
        Wire.Frame f = new Wire.Frame().wrap(b, 7);
        assertEquals(Wire.GET, f.type());
        assertEquals(28, f.payloadLength());
        assertEquals(OP, f.op());
        assertEquals(KEY, f.key());
        assertEquals(OFFSET, f.regionOffset());
        assertEquals(256, f.count());

        ByteBuffer e = ByteBuffer.wrap(bytes(6, 0, 0, 0, 8 + 4, OP_BYTES, 'g', 'o', 'n', 'e'));
        assertEquals("gone", new Wire.Frame().wrap(e, 0).reason());
        assertEquals(0, e.position(), "decoding reads by index");
    }

    @Test
    @Timeout(10)
    void payloadLengthsAreCheckedPerType() {
        assertTrue(Wire.wellFormed(Wire.DATA, 1));
        assertFalse(Wire.wellFormed(Wire.DATA, 0));
        assertTrue(Wire.wellFormed(Wire.PUT, 24) && Wire.wellFormed(Wire.PUT, 25));
        assertFalse(Wire.wellFormed(Wire.PUT, 23));
        assertTrue(Wire.wellFormed(Wire.GET, 28));
        assertTrue(!Wire.wellFormed(Wire.GET, 29) && !Wire.wellFormed(Wire.GET, 27));
        assertTrue(Wire.wellFormed(Wire.GET_RESPONSE, 8) && !Wire.wellFormed(Wire.GET_RESPONSE, 7));
        assertTrue(Wire.wellFormed(Wire.ACK, 8) && !Wire.wellFormed(Wire.ACK, 9));
        assertTrue(Wire.wellFormed(Wire.ERROR, 8) && Wire.wellFormed(Wire.ERROR, 8 + 1024));
        assertTrue(!Wire.wellFormed(Wire.ERROR, 8 + 1025) && !Wire.wellFormed(Wire.ERROR, 7));
        assertFalse(Wire.wellFormed(Wire.PUT, -1), "a length above 2^31 is refused");
        assertTrue(!Wire.wellFormed((byte) 0, 8) && !Wire.wellFormed((byte) 7, 8));
        assertEquals("unknown type 0x7f", Wire.typeName((byte) 0x7f));
    }

    @Test
    @Timeout(10)
    void theHandshakeIsMagicVersionAndFlagsOrStatus() {
        assertArrayEquals(bytes(0x52, 0x44, 0x43, 0x54, 0, 1, 0, 0), Handshake.encode(Handshake.NO_FLAGS).array());
        assertArrayEquals(bytes(0x52, 0x44, 0x43, 0x54, 0, 1, 0, 1),
                Handshake.encode(Handshake.STATUS_VERSION_REFUSED).array());
        ByteBuffer garbage = ByteBuffer.wrap(ascii("RDCX"));
        assertTrue(Handshake.magicPrefixMatches(garbage, 3));
        assertFalse(Handshake.magicPrefixMatches(garbage, 4));
        assertNull(Handshake.checkClientHello(Handshake.encode(Handshake.NO_FLAGS), "p"));
    }

    // ---- one-sided frames against a peer that speaks them by hand ----------------------------------------------

    private static RegionDescriptor peerRegion() {
        return new RegionDescriptor(1, 64, Access.readWrite(), KEY_BYTES);
    }

    @Test
    @Timeout(20)
    void aPutIsOnePutFrameAndReturnsOnTheAck() throws Exception {
        try (Link l = connectToRaw("")) {
            Future<?> put = helper.submit(() -> {
                l.comm().put(ByteBuffer.wrap(ascii("xyz")), peerRegion(), 5);
                return null;
            });
            ByteBuffer frame = Raw.readExactly(l.raw(), Wire.PUT_LENGTH + 3);
            byte[] op = Arrays.copyOfRange(frame.array(), Wire.OP_OFFSET, Wire.OP_OFFSET + 8);
            assertArrayEquals(bytes(2, 0, 0, 0, 24 + 3, op, KEY_BYTES, 0, 0, 0, 0, 0, 0, 0, 5, 'x', 'y', 'z'),
                    frame.array());
            Raw.writeAll(l.raw(), Raw.frame(Wire.ACK, op));
            put.get(10, TimeUnit.SECONDS);
        }
    }

    @Test
    @Timeout(20)
    void aGetIsOneGetFrameAndReturnsTheBytesOfTheResponse() throws Exception {
        try (Link l = connectToRaw("")) {
            ByteBuffer dst = ByteBuffer.allocate(3);
            Future<?> get = helper.submit(() -> {
                l.comm().get(peerRegion(), 4, dst);
                return null;
            });
            ByteBuffer frame = Raw.readExactly(l.raw(), Wire.GET_LENGTH);
            byte[] op = Arrays.copyOfRange(frame.array(), Wire.OP_OFFSET, Wire.OP_OFFSET + 8);
            assertArrayEquals(bytes(3, 0, 0, 0, 28, op, KEY_BYTES, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0, 3),
                    frame.array());
            Raw.writeAll(l.raw(), Raw.frame(Wire.GET_RESPONSE, bytes(op, 'a', 'b', 'c')));
            get.get(10, TimeUnit.SECONDS);
            assertArrayEquals(ascii("abc"), dst.array());
        }
    }

    @Test
    @Timeout(20)
    void anErrorFrameFailsThePutWithItsReason() throws Exception {
        try (Link l = connectToRaw("")) {
            Future<?> put = helper.submit(() -> {
                l.comm().put(ByteBuffer.wrap(ascii("x")), peerRegion(), 0);
                return null;
            });
            ByteBuffer frame = Raw.readExactly(l.raw(), Wire.PUT_LENGTH + 1);
            byte[] op = Arrays.copyOfRange(frame.array(), Wire.OP_OFFSET, Wire.OP_OFFSET + 8);
            Raw.writeAll(l.raw(), Raw.frame(Wire.ERROR, bytes(op, ascii("no such thing"))));
            ExecutionException e = assertThrows(ExecutionException.class, () -> put.get(10, TimeUnit.SECONDS));
            assertInstanceOf(RemoteAccessException.class, e.getCause());
            assertTrue(e.getCause().getMessage().contains("no such thing"), e.getCause().getMessage());
        }
    }

    @Test
    @Timeout(20)
    void theTargetAnswersPutAndGetFramesWithAckResponseAndError() throws Exception {
        try (Link l = connectToRaw("")) {
            MemoryRegion region = l.comm().register(ByteBuffer.allocateDirect(16), Access.readWrite());
            byte[] key = region.descriptor().key();
            byte[] op = {0, 0, 0, 0, 0, 0, 0, 77};
            Raw.writeAll(l.raw(), Raw.frame(Wire.PUT, bytes(op, key, 0, 0, 0, 0, 0, 0, 0, 1, 9, 8)));
            assertArrayEquals(bytes(5, 0, 0, 0, 8, op), Raw.readExactly(l.raw(), Wire.OP_LENGTH).array());
            assertEquals(9, region.buffer().get(1));
            assertEquals(8, region.buffer().get(2));

            op[7] = 78;
            Raw.writeAll(l.raw(), Raw.frame(Wire.GET, bytes(op, key, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 2)));
            assertArrayEquals(bytes(4, 0, 0, 0, 8 + 2, op, 9, 8),
                    Raw.readExactly(l.raw(), Wire.OP_LENGTH + 2).array());

            op[7] = 79;
            Raw.writeAll(l.raw(), Raw.frame(Wire.GET, bytes(op, new byte[8], 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2)));
            ByteBuffer header = Raw.readExactly(l.raw(), Wire.OP_LENGTH);
            assertEquals(Wire.ERROR, header.get(0));
            assertArrayEquals(op, Arrays.copyOfRange(header.array(), Wire.OP_OFFSET, Wire.OP_OFFSET + 8));
            String reason = new String(Raw.readExactly(l.raw(), header.getInt(Wire.PAYLOAD_LENGTH_OFFSET) - 8).array(),
                    StandardCharsets.UTF_8);
            assertTrue(reason.contains("no region with key 0"), reason);
        }
    }
}
