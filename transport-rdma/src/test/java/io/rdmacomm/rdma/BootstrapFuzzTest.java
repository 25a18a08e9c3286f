package io.rdmacomm.rdma;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.rdmacomm.api.HandshakeException;
import io.rdmacomm.testkit.fuzz.ParserChecks;
import java.nio.ByteBuffer;
import java.util.Arrays;
import org.junit.jupiter.api.Timeout;

/**
 * The rdma:// bootstrap, the first bytes any peer can send an rdma:// server (and a server's answer to a client), on
 * arbitrary bytes: a frame header is refused with a {@link HandshakeException} or names a body of at most
 * {@link BootstrapFrame#MAX_BODY} bytes; a whole HELLO, WELCOME or REFUSE body is refused with a
 * {@link HandshakeException} naming what was wrong, or decodes into fields within their bounds that encode back to
 * the bytes that arrived (less the extension entries the decoder skips); nothing else is thrown and no decode
 * allocates more than a few copies of the frame. Regression inputs:
 * {@code src/test/resources/io/rdmacomm/rdma/BootstrapFuzzTestInputs/}.
 */
@Timeout(120)
class BootstrapFuzzTest {
    /** A decode keeps at most a copy of the body (the node address, names, a reason) plus its error text. */
    private static final long ALLOCATION_CAP = 64 * 1024;

    @FuzzTest(maxDuration = "30s")
    void frame(byte[] input) {
        if (input.length < BootstrapFrame.HEADER) {
            return; // the reader waits for the rest of the header
        }
        ByteBuffer header = ByteBuffer.wrap(input, 0, BootstrapFrame.HEADER).slice();
        ParserChecks.Outcome<Integer> length = ParserChecks.parse(ALLOCATION_CAP,
                () -> BootstrapFrame.checkHeader(header, "fuzz"), HandshakeException.class);
        if (!length.accepted()) {
            return;
        }
        int n = length.value();
        assertTrue(n >= 0 && n <= BootstrapFrame.MAX_BODY, "body length " + n);
        if (input.length < BootstrapFrame.HEADER + n) {
            return; // the reader waits for the rest of the body
        }
        byte[] frame = Arrays.copyOf(input, BootstrapFrame.HEADER + n);
        switch (input[6]) {
            case BootstrapFrame.HELLO -> hello(frame);
            case BootstrapFrame.WELCOME -> welcome(frame);
            case BootstrapFrame.REFUSE -> refuse(frame);
            default -> assertEquals(BootstrapFrame.AUTH, input[6], "checkHeader let an unknown type through");
        }
    }

    private static ByteBuffer body(byte[] frame) {
        // handed over at a nonzero position of a larger buffer, as BootstrapFrame.body() does
        return ByteBuffer.wrap(frame, BootstrapFrame.HEADER, frame.length - BootstrapFrame.HEADER).slice();
    }

    private static void hello(byte[] frame) {
        ParserChecks.Outcome<BootstrapHello> outcome = ParserChecks.parse(ALLOCATION_CAP,
                () -> BootstrapHello.decode(body(frame), "fuzz"), HandshakeException.class);
        if (!outcome.accepted()) {
            return;
        }
        BootstrapHello h = outcome.value();
        assertName(h.provider());
        if (h.family() != null) {
            assertName(h.family());
        }
        assertTrue(h.nodeAddress().length >= 1 && h.nodeAddress().length <= BootstrapHello.MAX_ADDRESS);
        assertTrue(h.ringSize() > 0, "ring size " + h.ringSize());
        byte[] again = ParserChecks.bytes(h.encode());
        assertEncodesBack(frame, again);
        BootstrapHello h2 = decodeOrFail(() -> BootstrapHello.decode(body(again), "fuzz"));
        assertEquals(h.provider(), h2.provider());
        assertEquals(h.family(), h2.family());
        assertEquals(h.flags(), h2.flags());
        assertArrayEquals(h.nodeAddress(), h2.nodeAddress());
        assertEquals(h.channelId(), h2.channelId());
        assertEquals(h.ringSize(), h2.ringSize());
    }

    private static void welcome(byte[] frame) {
        ParserChecks.Outcome<BootstrapWelcome> outcome = ParserChecks.parse(ALLOCATION_CAP,
                () -> BootstrapWelcome.decode(body(frame), "fuzz"), HandshakeException.class);
        if (!outcome.accepted()) {
            return;
        }
        BootstrapWelcome w = outcome.value();
        assertTrue(w.nodeAddress().length >= 1 && w.nodeAddress().length <= BootstrapHello.MAX_ADDRESS);
        assertTrue(w.ringSize() > 0, "ring size " + w.ringSize());
        byte[] again = ParserChecks.bytes(w.encode());
        assertEncodesBack(frame, again);
        BootstrapWelcome w2 = decodeOrFail(() -> BootstrapWelcome.decode(body(again), "fuzz"));
        assertEquals(w.flags(), w2.flags());
        assertArrayEquals(w.nodeAddress(), w2.nodeAddress());
        assertEquals(w.channelId(), w2.channelId());
        assertEquals(w.ringSize(), w2.ringSize());
    }

    private static void refuse(byte[] frame) {
        ParserChecks.Outcome<BootstrapRefuse> outcome = ParserChecks.parse(ALLOCATION_CAP,
                () -> BootstrapRefuse.decode(body(frame), "fuzz"), HandshakeException.class);
        if (!outcome.accepted()) {
            return;
        }
        BootstrapRefuse r = outcome.value();
        // a reason that is not valid UTF-8 decodes with replacement characters, which take more bytes: re-encoded,
        // it is cut to the limit at a character boundary and then stays as it is
        byte[] again = ParserChecks.bytes(r.encode());
        BootstrapRefuse r2 = decodeOrFail(() -> BootstrapRefuse.decode(body(again), "fuzz"));
        assertEquals(r.code(), r2.code());
        assertTrue(r.reason().startsWith(r2.reason()), "the re-encoded reason is a prefix of the decoded one");
        BootstrapRefuse r3 = decodeOrFail(() -> BootstrapRefuse.decode(body(ParserChecks.bytes(r2.encode())),
                "fuzz"));
        assertEquals(r2.reason(), r3.reason(), "a reason that went through once goes through unchanged");
    }

    /** The re-encoding is the frame that arrived, or (extension entries skipped) a prefix of it with a new length. */
    private static void assertEncodesBack(byte[] frame, byte[] again) {
        assertTrue(again.length <= frame.length, "re-encoded " + again.length + " > " + frame.length);
        if (again.length == frame.length) {
            assertArrayEquals(frame, again, "a frame without unknown extensions encodes back to its bytes");
        } else {
            assertArrayEquals(Arrays.copyOfRange(frame, 0, 7), Arrays.copyOfRange(again, 0, 7));
        }
    }

    private static void assertName(String name) {
        assertTrue(name.length() >= 1 && name.length() <= BootstrapHello.MAX_PROVIDER, name);
        assertTrue(name.chars().allMatch(c -> c >= 0x21 && c <= 0x7e), name);
    }

    @FunctionalInterface
    private interface Decode<T> {
        T run() throws HandshakeException;
    }

    private static <T> T decodeOrFail(Decode<T> decode) {
        try {
            return decode.run();
        } catch (HandshakeException e) {
            throw new AssertionError("a re-encoded frame is refused: " + e.getMessage(), e);
        }
    }
}
