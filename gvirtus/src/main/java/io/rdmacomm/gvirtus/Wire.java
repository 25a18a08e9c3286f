package io.rdmacomm.gvirtus;

import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.CommunicatorException;
import io.rdmacomm.api.support.Payloads;
import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * GVirtuS's request and reply framing on a communicator's byte stream. Requests are the routine name, a NUL,
 * the input length (u64) and the input; replies are the exit code (i32), the elapsed seconds (f64), the output
 * length (u64) and the output; all little-endian, no magic, no version, nothing else. Every read is bounded by
 * {@link GVirtuSLimits} before anything is allocated.
 */
final class Wire {
    /** Reply header: exit code, elapsed seconds, output length. */
    static final int REPLY_HEADER_BYTES = 4 + 8 + 8;
    /**
     * Until its NUL is seen, a request still holds at least the NUL and the 8-byte input length after the bytes
     * read so far; so the name can be read in chunks of this many bytes without ever reading into the input.
     */
    private static final int NAME_CHUNK = 1 + 8;
    private static final int PREVIEW_BYTES = 48;

    private Wire() {
    }

    static void writeRequest(Communicator c, byte[] routine, byte[] input) throws IOException {
        ByteBuffer head = ByteBuffer.allocate(routine.length + 1 + 8).order(ByteOrder.LITTLE_ENDIAN);
        head.put(routine).put((byte) 0).putLong(input.length).flip();
        c.write(head);
        c.write(ByteBuffer.wrap(input));
        c.sync();
    }

    /**
     * The next request, or empty if the stream ended cleanly before its first byte (the peer ended the session).
     *
     * @throws EOFException if the stream ends inside the request; the message says which part and how many of
     *     its bytes arrived
     * @throws CommunicatorException if the name has no NUL within {@code maxRoutineNameBytes} or the input
     *     length exceeds {@code maxInputBytes}
     */
    static Optional<GVirtuSRequest> readRequest(Communicator c, GVirtuSLimits limits) throws IOException {
        int max = limits.maxRoutineNameBytes();
        ByteBuffer head = ByteBuffer.allocate(max + 8).order(ByteOrder.LITTLE_ENDIAN);
        int nul = -1;
        boolean ended = false;
        while (nul < 0) {
            int from = head.position();
            if (ended) {
                throw new EOFException("end of stream from " + c.peerName() + " after " + from
                        + " bytes of a request, before the NUL that ends its routine name: "
                        + preview(head.array(), from));
            }
            if (from >= max) {
                throw new CommunicatorException("request from " + c.peerName() + ": no NUL within the first " + max
                        + " bytes (maxRoutineNameBytes), so no routine name; the stream starts with "
                        + preview(head.array(), from));
            }
            // never past the limit: a peer that sends exactly maxRoutineNameBytes without a NUL and then waits
            // must get its error, not a backend waiting for bytes it will never need
            head.limit(Math.min(from + NAME_CHUNK, max));
            if (from == 0 && c.read(head) < 0) {
                return Optional.empty();
            }
            while (head.hasRemaining() && !ended) {
                ended = c.read(head) < 0;
            }
            for (int i = from; i < head.position(); i++) {
                if (head.get(i) == 0) {
                    nul = i;
                    break;
                }
            }
        }
        String routine = routineName(c, head.array(), nul);
        if (ended) {
            throw new EOFException("end of stream from " + c.peerName() + " in the input length (8 bytes) of "
                    + "request '" + routine + "': " + (head.position() - nul - 1) + " of 8 bytes arrived");
        }
        // the chunk that held the NUL may already hold part of the input length
        head.limit(nul + 1 + 8);
        fill(c, head, () -> "the input length (8 bytes) of request '" + routine + "'", nul + 1);
        long length = head.getLong(nul + 1);
        if (length < 0 || length > limits.maxInputBytes()) {
            throw new CommunicatorException("request '" + routine + "' from " + c.peerName() + ": input length "
                    + Long.toUnsignedString(length) + " bytes exceeds maxInputBytes " + limits.maxInputBytes());
        }
        byte[] input = payload(c, (int) length,
                () -> "the input (" + length + " bytes) of request '" + routine + "'");
        return Optional.of(new GVirtuSRequest(routine, input));
    }

    static void writeResult(Communicator c, GVirtuSResult r) throws IOException {
        byte[] output = r.output();
        ByteBuffer head = ByteBuffer.allocate(REPLY_HEADER_BYTES).order(ByteOrder.LITTLE_ENDIAN);
        head.putInt(r.exitCode()).putDouble(r.elapsedSeconds()).putLong(output.length).flip();
        c.write(head);
        c.write(ByteBuffer.wrap(output));
        c.sync();
    }

    /**
     * The reply to {@code what} (e.g. "request 'echo'").
     *
     * @throws EOFException if the stream ends before the reply is complete, also before its first byte
     * @throws CommunicatorException if the output length exceeds {@code maxOutputBytes}
     */
    static GVirtuSResult readResult(Communicator c, GVirtuSLimits limits, String what) throws IOException {
        ByteBuffer head = ByteBuffer.allocate(REPLY_HEADER_BYTES).order(ByteOrder.LITTLE_ENDIAN);
        fill(c, head, () -> "the reply header (exit code, elapsed seconds, output length) to " + what, 0);
        int exitCode = head.getInt(0);
        double elapsed = head.getDouble(4);
        long length = head.getLong(12);
        if (length < 0 || length > limits.maxOutputBytes()) {
            throw new CommunicatorException("reply to " + what + " from " + c.peerName() + ": output length "
                    + Long.toUnsignedString(length) + " bytes exceeds maxOutputBytes " + limits.maxOutputBytes()
                    + " (exit code " + exitCode + ")");
        }
        byte[] output = payload(c, (int) length, () -> "the output (" + length + " bytes) of the reply to " + what);
        return new GVirtuSResult(exitCode, elapsed, output);
    }

    /**
     * Fills {@code dst} to its limit. {@code base} is where the part named by {@code what} starts in {@code dst},
     * so the message counts that part's bytes only. {@code what} is built only for the error: a backend reads a
     * request header per call.
     */
    private static void fill(Communicator c, ByteBuffer dst, Supplier<String> what, int base) throws IOException {
        while (dst.hasRemaining()) {
            if (c.read(dst) < 0) {
                throw new EOFException("end of stream from " + c.peerName() + " in " + what.get() + ": "
                        + (dst.position() - base) + " of " + (dst.limit() - base) + " bytes arrived");
            }
        }
    }

    /** Reads a payload the header declared, holding only what arrived ({@link Payloads}). */
    private static byte[] payload(Communicator c, int length, Supplier<String> what) throws IOException {
        byte[] b = Payloads.read(c, length);
        if (b.length < length) {
            throw new EOFException("end of stream from " + c.peerName() + " in " + what.get() + ": " + b.length + " of "
                    + length + " bytes arrived");
        }
        return b;
    }

    /** Up to {@value #PREVIEW_BYTES} bytes for an error message: printable ASCII as is, the rest as \xNN. */
    /**
     * The routine name in the first {@code length} bytes, which must be UTF-8: a lenient decoding would turn bad bytes
     * into U+FFFD and name a routine the peer never asked for (found by {@code GVirtuSRequestFuzzTest}).
     */
    private static String routineName(Communicator c, byte[] bytes, int length) throws CommunicatorException {
        try {
            return StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(bytes, 0, length))
                    .toString();
        } catch (CharacterCodingException e) {
            throw new CommunicatorException("request from " + c.peerName() + ": its routine name is not UTF-8: "
                    + preview(bytes, length));
        }
    }

    static String preview(byte[] bytes, int n) {
        StringBuilder sb = new StringBuilder("'");
        for (int i = 0; i < Math.min(n, PREVIEW_BYTES); i++) {
            int b = bytes[i] & 0xff;
            if (b >= 0x20 && b < 0x7f && b != '\\' && b != '\'') {
                sb.append((char) b);
            } else {
                sb.append(String.format("\\x%02x", b));
            }
        }
        return sb.append(n > PREVIEW_BYTES ? "'..." : "'").toString();
    }
}
