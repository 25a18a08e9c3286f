package io.rdmacomm.gvirtus;

import static io.rdmacomm.gvirtus.ScriptedPeer.hex;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.Mockito.atLeastOnce;
import static org.mockito.Mockito.inOrder;

import io.rdmacomm.api.CommunicatorException;
import java.io.EOFException;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.mockito.InOrder;

/**
 * Byte-exact request and reply framing. The hex strings are the bytes a real GVirtuS frontend and backend
 * exchanged on TCP (upstream commit 18f16dc, captured with tcpdump; see the module README).
 */
@Timeout(10)
class FramingTest {
    /** Frontend::Execute("echo") with input Add("hello", 5): name, NUL, u64 input length, input. */
    static final String ECHO_REQUEST = "6563686f00" + "0d00000000000000" + "0500000000000000" + "68656c6c6f";
    /** The backend's Result::Dump for it: i32 exit, f64 seconds, u64 output length, output. */
    static final String ECHO_REPLY = "00000000" + "0000000000000000" + "0d00000000000000" + "0500000000000000"
            + "68656c6c6f";
    /** What the backend answered to a routine no plugin handles. */
    static final String UNKNOWN_REPLY = "ffffffff" + "0000000000000000" + "0000000000000000";
    static final byte[] HELLO_POINTER = hex("0500000000000000" + "68656c6c6f");

    @Test
    void requestIsNameNulLengthInputThenSync() throws Exception {
        ScriptedPeer peer = ScriptedPeer.reading("");
        new GVirtuSRequest("echo", HELLO_POINTER).writeTo(peer.mock);
        assertEquals(ECHO_REQUEST, peer.writtenHex());
        InOrder order = inOrder(peer.mock);
        order.verify(peer.mock, atLeastOnce()).write(any());
        order.verify(peer.mock).sync();
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 3, 9, Integer.MAX_VALUE})
    void requestsDecodeWithoutReadingIntoTheNextOne(int chunk) throws Exception {
        // two requests back to back, the second with an empty name and no input, then a clean end
        byte[] stream = hex(ECHO_REQUEST + "00" + "0000000000000000");
        ScriptedPeer peer = new ScriptedPeer(stream, chunk);
        GVirtuSRequest first = GVirtuSRequest.readFrom(peer.mock, GVirtuSLimits.DEFAULT).orElseThrow();
        assertEquals(new GVirtuSRequest("echo", HELLO_POINTER), first);
        assertEquals(ECHO_REQUEST.length() / 2, peer.consumed());
        GVirtuSRequest second = GVirtuSRequest.readFrom(peer.mock, GVirtuSLimits.DEFAULT).orElseThrow();
        assertEquals("", second.routine());
        assertEquals(0, second.input().length);
        assertEquals(Optional.empty(), GVirtuSRequest.readFrom(peer.mock, GVirtuSLimits.DEFAULT));
    }

    @Test
    void longNamesAreReadWhole() throws Exception {
        String name = "cudnnGetConvolutionBackwardFilterAlgorithm_v7";
        GVirtuSRequest r = new GVirtuSRequest(name, new byte[] {1, 2});
        ScriptedPeer out = ScriptedPeer.reading("");
        r.writeTo(out.mock);
        ScriptedPeer in = new ScriptedPeer(out.written.toByteArray(), 5);
        assertEquals(r, GVirtuSRequest.readFrom(in.mock, GVirtuSLimits.DEFAULT).orElseThrow());
    }

    @Test
    void replyIsExitSecondsLengthOutputThenSync() throws Exception {
        ScriptedPeer peer = ScriptedPeer.reading("");
        GVirtuSResult.ok(HELLO_POINTER).writeTo(peer.mock);
        GVirtuSResult.error(GVirtuSResult.EXIT_UNKNOWN_ROUTINE).writeTo(peer.mock);
        new GVirtuSResult(42, 1.5, new byte[0]).writeTo(peer.mock);
        assertEquals(ECHO_REPLY + UNKNOWN_REPLY + "2a000000" + "000000000000f83f" + "0000000000000000",
                peer.writtenHex());
        InOrder order = inOrder(peer.mock);
        order.verify(peer.mock, atLeastOnce()).write(any());
        order.verify(peer.mock).sync();
    }

    @Test
    void repliesDecode() throws Exception {
        ScriptedPeer peer = new ScriptedPeer(hex(ECHO_REPLY + UNKNOWN_REPLY + "feffffff" + "000000000000f83f"
                + "0100000000000000" + "07"), 2);
        GVirtuSResult echo = GVirtuSResult.readFrom(peer.mock, GVirtuSLimits.DEFAULT);
        assertEquals(new GVirtuSResult(0, 0.0, HELLO_POINTER), echo);
        assertArrayEquals("hello".getBytes(), echo.outputBuffer().getPointer());
        assertEquals(new GVirtuSResult(-1, 0.0, new byte[0]), GVirtuSResult.readFrom(peer.mock, GVirtuSLimits.DEFAULT));
        assertEquals(new GVirtuSResult(-2, 1.5, new byte[] {7}), GVirtuSResult.readFrom(peer.mock,
                GVirtuSLimits.DEFAULT));
    }

    @Test
    void truncatedNameSaysHowManyBytesArrivedBeforeTheNul() throws Exception {
        ScriptedPeer peer = ScriptedPeer.reading("656368");
        EOFException e = assertThrows(EOFException.class, () -> GVirtuSRequest.readFrom(peer.mock,
                GVirtuSLimits.DEFAULT));
        assertEquals("end of stream from scripted-peer after 3 bytes of a request, before the NUL that ends its "
                + "routine name: 'ech'", e.getMessage());
    }

    @Test
    void aRoutineNameThatIsNotUtf8IsRefusedNotReplacedByAnotherName() throws Exception {
        // "ec", a byte that cannot start a UTF-8 sequence, "o", NUL, input length 0
        ScriptedPeer peer = ScriptedPeer.reading("6563ff6f00" + "0000000000000000");
        CommunicatorException e = assertThrows(CommunicatorException.class, () -> GVirtuSRequest.readFrom(peer.mock,
                GVirtuSLimits.DEFAULT));
        assertTrue(e.getMessage().startsWith("request from scripted-peer: its routine name is not UTF-8: "),
                e.getMessage());
    }

    @Test
    void truncatedLengthSaysExpectedAndArrived() throws Exception {
        ScriptedPeer peer = ScriptedPeer.reading("6563686f00" + "0d0000");
        EOFException e = assertThrows(EOFException.class, () -> GVirtuSRequest.readFrom(peer.mock,
                GVirtuSLimits.DEFAULT));
        assertEquals("end of stream from scripted-peer in the input length (8 bytes) of request 'echo': 3 of 8 "
                + "bytes arrived", e.getMessage());
    }

    @Test
    void truncatedInputSaysExpectedAndArrived() throws Exception {
        ScriptedPeer peer = ScriptedPeer.reading(ECHO_REQUEST.substring(0, ECHO_REQUEST.length() - 16));
        EOFException e = assertThrows(EOFException.class, () -> GVirtuSRequest.readFrom(peer.mock,
                GVirtuSLimits.DEFAULT));
        assertEquals("end of stream from scripted-peer in the input (13 bytes) of request 'echo': 5 of 13 bytes "
                + "arrived", e.getMessage());
    }

    @Test
    void nameMayFillTheLimitIncludingItsNulButNotMore() throws Exception {
        GVirtuSLimits limits = GVirtuSLimits.DEFAULT.withMaxRoutineNameBytes(16);
        String fits = "a".repeat(15);
        ScriptedPeer ok = new ScriptedPeer(requestBytes(fits), 1);
        assertEquals(fits, GVirtuSRequest.readFrom(ok.mock, limits).orElseThrow().routine());

        ScriptedPeer tooLong = new ScriptedPeer(requestBytes("a".repeat(16)), Integer.MAX_VALUE);
        CommunicatorException e = assertThrows(CommunicatorException.class, () -> GVirtuSRequest.readFrom(
                tooLong.mock, limits));
        assertTrue(e.getMessage().contains("no NUL within the first 16 bytes (maxRoutineNameBytes)"), e.getMessage());
    }

    @Test
    void noNulWithinTheLimitEndsTheReadWithoutWaitingForMore() throws Exception {
        // 40 bytes of garbage with no NUL: the reader gives up at the limit instead of reading on
        byte[] garbage = new byte[40];
        java.util.Arrays.fill(garbage, (byte) 0xab);
        ScriptedPeer peer = new ScriptedPeer(garbage, Integer.MAX_VALUE);
        CommunicatorException e = assertThrows(CommunicatorException.class, () -> GVirtuSRequest.readFrom(peer.mock,
                GVirtuSLimits.DEFAULT.withMaxRoutineNameBytes(16)));
        assertTrue(e.getMessage().startsWith("request from scripted-peer: no NUL within the first 16 bytes "
                + "(maxRoutineNameBytes), so no routine name; the stream starts with '\\xab\\xab"), e.getMessage());
        assertTrue(peer.consumed() <= 16 + 8, "read " + peer.consumed() + " bytes");
    }

    @Test
    void hugeInputLengthIsRejectedBeforeAllocating() throws Exception {
        ScriptedPeer peer = ScriptedPeer.reading("6563686f00" + "ffffffffffffffff" + "00");
        CommunicatorException e = assertThrows(CommunicatorException.class, () -> GVirtuSRequest.readFrom(peer.mock,
                GVirtuSLimits.DEFAULT));
        assertEquals("request 'echo' from scripted-peer: input length 18446744073709551615 bytes exceeds "
                + "maxInputBytes 268435456", e.getMessage());
        assertEquals(13, peer.consumed());

        ScriptedPeer justOver = ScriptedPeer.reading("6563686f00" + "0500000000000000" + "0102030405");
        e = assertThrows(CommunicatorException.class, () -> GVirtuSRequest.readFrom(justOver.mock,
                GVirtuSLimits.DEFAULT.withMaxInputBytes(4)));
        assertTrue(e.getMessage().contains("input length 5 bytes exceeds maxInputBytes 4"), e.getMessage());
    }

    @Test
    void aProtocolV2HeaderEndsTheReadAsAnOverlongInput() throws Exception {
        // upstream's v2 Hello header (big-endian): magic GVR2, major 2, minor 0, type 1, flags 0, session 1, ...
        ScriptedPeer peer = ScriptedPeer.reading("47565232" + "0002" + "0000" + "0001" + "0000" + "0000000000000001"
                + "0000000000000000" + "00000000" + "00000000" + "0000000000000020" + "00000000");
        CommunicatorException e = assertThrows(CommunicatorException.class, () -> GVirtuSRequest.readFrom(peer.mock,
                GVirtuSLimits.DEFAULT));
        assertTrue(e.getMessage().startsWith("request 'GVR2' from scripted-peer: input length 4294967298 bytes "
                + "exceeds maxInputBytes"), e.getMessage());
    }

    @Test
    void replyOverTheOutputLimitAndTruncatedRepliesAreErrors() throws Exception {
        ScriptedPeer big = ScriptedPeer.reading("00000000" + "0000000000000000" + "0000000000000001");
        CommunicatorException e = assertThrows(CommunicatorException.class, () -> GVirtuSResult.readFrom(big.mock,
                GVirtuSLimits.DEFAULT));
        assertTrue(e.getMessage().contains("output length 72057594037927936 bytes exceeds maxOutputBytes"),
                e.getMessage());

        ScriptedPeer none = ScriptedPeer.reading("");
        EOFException eof = assertThrows(EOFException.class, () -> GVirtuSResult.readFrom(none.mock,
                GVirtuSLimits.DEFAULT));
        assertTrue(eof.getMessage().endsWith("0 of 20 bytes arrived"), eof.getMessage());

        ScriptedPeer cut = ScriptedPeer.reading(ECHO_REPLY.substring(0, ECHO_REPLY.length() - 2));
        eof = assertThrows(EOFException.class, () -> GVirtuSResult.readFrom(cut.mock, GVirtuSLimits.DEFAULT));
        assertTrue(eof.getMessage().endsWith("the output (13 bytes) of the reply to a request: 12 of 13 bytes "
                + "arrived"), eof.getMessage());
    }

    @Test
    void namesWithNulCannotBeSentAndLimitsAreChecked() {
        assertThrows(IllegalArgumentException.class, () -> new GVirtuSRequest("ec\0ho", new byte[0]));
        assertThrows(IllegalArgumentException.class, () -> GVirtuSLimits.DEFAULT.withMaxRoutineNameBytes(1));
        assertThrows(IllegalArgumentException.class, () -> GVirtuSLimits.DEFAULT.withMaxInputBytes(-1));
        assertThrows(IllegalArgumentException.class, () -> GVirtuSLimits.DEFAULT.withMaxOutputBytes(1L << 40));
    }

    private static byte[] requestBytes(String name) throws Exception {
        ScriptedPeer out = ScriptedPeer.reading("");
        new GVirtuSRequest(name, new byte[0]).writeTo(out.mock);
        return out.written.toByteArray();
    }
}
