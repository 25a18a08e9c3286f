package io.rdmacomm.tcp;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.CommunicatorException;
import io.rdmacomm.api.Communicators;
import io.rdmacomm.testkit.fuzz.ParserChecks;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Timeout;

/**
 * A tcp:// server's frame reader on arbitrary bytes after a valid handshake, over a real loopback connection: the
 * application reads exactly the stream bytes of the DATA frames up to the first frame that is malformed or cut
 * short (remote-memory frames to unknown regions and operations are answered or dropped, not delivered), then a
 * clean end of stream if every frame was whole and well formed, else a {@link CommunicatorException} naming the
 * frame; never another exception, never a wait for bytes that cannot come, and no allocation that follows a
 * declared length. The frames are checked against a model written from the table in {@link Wire}'s javadoc.
 * Regression inputs: {@code src/test/resources/io/rdmacomm/tcp/TcpFramesFuzzTestInputs/}.
 */
@Timeout(120)
class TcpFramesFuzzTest {
    private static final int HEADER = 5;
    private static Communicator server;

    @BeforeAll
    static void serve() throws Exception {
        server = Communicators.serve("tcp://127.0.0.1:0?readTimeout=20s");
        // the first connections load every class of the paths (clean end, malformed frame, cut frame): allocations
        // measured afterwards are the reader's
        byte[] frames = {1, 0, 0, 0, 1, 'x', 3, 0, 0, 0, 28, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0,
            0, 0, 0, 0, 0, 0, 0, 0, 4, 9};
        for (byte[] warmUp : List.of(frames, new byte[] {10, 0, 0, 0, 0, 'z'}, new byte[] {1, 0, 0, 0, 9, 'x'})) {
            deliver(warmUp, Long.MAX_VALUE);
        }
    }

    @AfterAll
    static void stop() throws IOException {
        server.close();
    }

    /** What the model expects of {@code input}: the stream bytes, and whether every frame is whole and valid. */
    private record Expected(byte[] stream, boolean clean) {
    }

    private static Expected model(byte[] input) {
        ByteBuffer in = ByteBuffer.wrap(input);
        ByteArrayOutputStream stream = new ByteArrayOutputStream();
        while (in.remaining() >= HEADER) {
            byte type = in.get();
            long length = Integer.toUnsignedLong(in.getInt());
            boolean valid = switch (type) {
                case 1 -> length >= 1;                        // DATA
                case 2 -> length >= 24;                       // PUT
                case 3 -> length == 28;                       // GET
                case 4 -> length >= 8;                        // GET_RESPONSE
                case 5 -> length == 8;                        // ACK
                case 6 -> length >= 8 && length <= 8 + 1024;  // ERROR
                case 7 -> length == 0;                        // HEARTBEAT
                default -> false;
            };
            if (!valid || length > Integer.MAX_VALUE) {
                return new Expected(stream.toByteArray(), false);
            }
            int present = (int) Math.min(length, in.remaining());
            if (type == 1) {
                stream.write(input, in.position(), present);
            }
            if (present < length) {
                return new Expected(stream.toByteArray(), false);
            }
            in.position(in.position() + present);
        }
        return new Expected(stream.toByteArray(), !in.hasRemaining());
    }

    /** What the server's application reads of {@code frames}, sent after a valid handshake. */
    private static ParserChecks.Outcome<byte[]> deliver(byte[] frames, long allocationCap) throws Exception {
        try (SocketChannel raw = Raw.connectAndHandshake(server.endpoint().port());
                Communicator peer = server.accept()) {
            Raw.writeAll(raw, ByteBuffer.wrap(frames));
            raw.shutdownOutput();
            ByteArrayOutputStream got = new ByteArrayOutputStream();
            ByteBuffer b = ByteBuffer.allocate(512);
            ParserChecks.Outcome<byte[]> outcome = ParserChecks.parseOnce(allocationCap, () -> {
                while (peer.read(b.clear()) >= 0) {
                    got.write(b.array(), 0, b.position());
                }
                return got.toByteArray();
            }, CommunicatorException.class);
            return outcome.accepted() ? outcome : new ParserChecks.Outcome<>(got.toByteArray(), outcome.refusal());
        }
    }

    /**
     * {@link #deliver}, again on a fresh connection if the first went over the cap: what the thread allocates
     * includes the first use of a path (class loading, and while fuzzing Jazzer's coverage map growing for newly
     * instrumented code, 4 MB once, found by a 150 s run), so only a delivery over the cap twice counts, as
     * {@link ParserChecks#parse} does for pure parsers.
     */
    private static ParserChecks.Outcome<byte[]> deliverChecked(byte[] input, long allocationCap) throws Exception {
        try {
            return deliver(input, allocationCap);
        } catch (AssertionError e) {
            if (e.getMessage() == null || !e.getMessage().startsWith("parser allocated")) {
                throw e;
            }
            return deliver(input, allocationCap);
        }
    }

    @FuzzTest(maxDuration = "30s")
    void frames(byte[] input) throws Exception {
        Expected expected = model(input);
        ParserChecks.Outcome<byte[]> outcome = deliverChecked(input, 64 * 1024 + 4L * input.length);
        assertArrayEquals(expected.stream(), outcome.value(), "the stream bytes of the DATA frames, in order");
        if (expected.clean()) {
            assertTrue(outcome.accepted(), () -> "whole, valid frames end cleanly, not with " + outcome.refusal());
        } else {
            assertTrue(!outcome.accepted(), "a malformed or cut frame fails the read");
            String why = outcome.refusal().getMessage();
            assertTrue(why.contains("malformed frame") || why.contains("in the middle of a frame"), why);
            assertInstanceOf(CommunicatorException.class, outcome.refusal());
        }
    }
}
