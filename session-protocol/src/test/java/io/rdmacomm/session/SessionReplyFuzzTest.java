package io.rdmacomm.session;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.rdmacomm.api.CommunicatorException;
import io.rdmacomm.testkit.fuzz.ParserChecks;
import io.rdmacomm.testkit.fuzz.ScriptedStream;
import java.io.EOFException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.junit.jupiter.api.Timeout;

/**
 * The client's reading of what a server answers, on arbitrary bytes in short reads: a {@link SessionReply} and,
 * after an OK, an {@link ExchangeResult}, as a client reads them. Each is refused with a
 * {@link CommunicatorException} (an {@link EOFException} where the stream ends first) or read into a value that
 * encodes back to the bytes consumed (where the message text is valid UTF-8; otherwise into the text those bytes
 * decode to); nothing else is thrown and no read allocates more than the caps of messages and result bodies.
 * Regression inputs: {@code src/test/resources/io/rdmacomm/session/SessionReplyFuzzTestInputs/}.
 */
@Timeout(120)
class SessionReplyFuzzTest {
    private static final long ALLOCATION_CAP = 4L * (SessionProtocol.MAX_MESSAGE_LENGTH
            + SessionProtocol.MAX_RESULT_BODY) + 256 * 1024;

    /** What a client read: the reply, the result if the reply was OK and the result whole, and the bytes each took. */
    private record Read(SessionReply reply, int replyBytes, ExchangeResult result, int resultBytes) {
    }

    @FuzzTest(maxDuration = "30s")
    void replyAndResult(byte[] input) throws Exception {
        ParserChecks.Outcome<Read> outcome = ParserChecks.parse(ALLOCATION_CAP, () -> {
            ScriptedStream peer = new ScriptedStream(input, 7);
            SessionReply reply = SessionReply.read(peer);
            int replyBytes = peer.consumed();
            if (reply.status() != SessionStatus.OK) {
                return new Read(reply, replyBytes, null, 0);
            }
            ExchangeResult result = ExchangeResult.read(peer);
            return new Read(reply, replyBytes, result, peer.consumed() - replyBytes);
        }, CommunicatorException.class, EOFException.class);
        if (!outcome.accepted()) {
            return;
        }
        Read read = outcome.value();
        byte[] replyBytes = Arrays.copyOf(input, read.replyBytes());
        assertEncodesBack(replyBytes, read.reply().encode(), SessionProtocol.REPLY_HEADER_LENGTH, "reply");
        if (read.result() != null) {
            byte[] resultBytes = Arrays.copyOfRange(input, read.replyBytes(), read.replyBytes() + read.resultBytes());
            assertEncodesBack(resultBytes, read.result().encode(), ExchangeResult.HEADER_LENGTH, "result");
        }
    }

    /** The message text starts at {@code textAt} and its length is the short before it. */
    private static void assertEncodesBack(byte[] consumed, ByteBuffer encoded, int textAt, String what) {
        int textLength = ByteBuffer.wrap(consumed).getShort(textAt - 2) & 0xffff;
        byte[] text = Arrays.copyOfRange(consumed, textAt, textAt + textLength);
        byte[] again = new String(text, StandardCharsets.UTF_8).getBytes(StandardCharsets.UTF_8);
        if (Arrays.equals(text, again)) {
            assertArrayEquals(consumed, ParserChecks.bytes(encoded), "a " + what + " read encodes back to its bytes");
        } else {
            // the decoded text (bad bytes become U+FFFD, 3 bytes each) may outgrow the limit and be cut, whole
            // characters only
            int length = encoded.getShort(textAt - 2) & 0xffff;
            byte[] carried = Arrays.copyOfRange(ParserChecks.bytes(encoded), textAt, textAt + length);
            assertTrue(length <= SessionProtocol.MAX_MESSAGE_LENGTH, "a " + what + " text within the limit");
            assertArrayEquals(Arrays.copyOf(again, Math.min(again.length, length)), carried,
                    "a " + what + " with text that is not UTF-8 carries what it decodes to");
            assertArrayEquals(carried, new String(carried, StandardCharsets.UTF_8).getBytes(StandardCharsets.UTF_8),
                    "a " + what + " text cut to the limit is still UTF-8");
            assertTrue(length == again.length || length > SessionProtocol.MAX_MESSAGE_LENGTH - 4,
                    "a " + what + " text is cut only when it does not fit, by less than a character");
        }
    }
}
