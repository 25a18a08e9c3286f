package io.rdmacomm.tcp;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.CommunicatorException;
import io.rdmacomm.api.Communicators;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The bytes on the wire, checked against a peer that speaks the format by hand. */
class WireFormatTest {
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
}
