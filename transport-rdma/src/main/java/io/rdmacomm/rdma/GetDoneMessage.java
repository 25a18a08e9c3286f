package io.rdmacomm.rdma;

import io.rdmacomm.api.support.Utf8;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

/**
 * GET_DONE: the owner's answer to a GET_REQ. Status 0 travels as the notification of the write that placed the
 * bytes (so it arrives after them); status 1 refuses, with the owner's reason, and nothing was written.
 *
 * <pre>
 * offset 0  u8  type 15
 *        1  u32 sequence number of the GET_REQ
 *        5  u8  status: 0 done, 1 refused
 *        6  reason (UTF-8, to the end; empty when done, 1 to MAX_REASON bytes when refused)
 * </pre>
 *
 * @param seq the request answered
 * @param refusal the owner's reason, or null if the bytes are placed
 */
record GetDoneMessage(int seq, String refusal) {
    static final byte TYPE = 15;
    static final int SEQ_OFFSET = 1;
    static final int STATUS_OFFSET = 5;
    static final int REASON_OFFSET = 6;
    static final byte DONE = 0;
    static final byte REFUSED = 1;
    /** The longest reason sent: a GET_DONE fits any provider's control messages. */
    static final int MAX_REASON = 512;

    static ByteBuffer encodeDone(ByteBuffer dst, int seq) {
        return dst.clear().put(TYPE).putInt(seq).put(DONE).flip();
    }

    /** A refusal; a reason longer than {@link #MAX_REASON} bytes is cut at a character boundary. */
    static ByteBuffer encodeRefused(int seq, String reason) {
        byte[] r = Utf8.prefix(reason, MAX_REASON);
        int n = r.length;
        return ByteBuffer.allocate(REASON_OFFSET + n).put(TYPE).putInt(seq).put(REFUSED).put(r, 0, n).flip();
    }

    static GetDoneMessage decode(ByteBuffer m) throws MalformedMessageException {
        Wire.requireAtLeast(m, TYPE, REASON_OFFSET);
        int at = m.position();
        int seq = m.getInt(at + SEQ_OFFSET);
        byte status = m.get(at + STATUS_OFFSET);
        int reasonLength = m.remaining() - REASON_OFFSET;
        if (status == DONE) {
            Wire.requireLength(m, TYPE, REASON_OFFSET);
            return new GetDoneMessage(seq, null);
        }
        if (status != REFUSED) {
            throw new MalformedMessageException(TYPE, "status " + status + ", expected 0 or 1");
        }
        if (reasonLength < 1 || reasonLength > MAX_REASON) {
            throw new MalformedMessageException(TYPE, "a " + reasonLength + " byte reason, expected 1 to "
                    + MAX_REASON);
        }
        try {
            String reason = StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(m.duplicate().position(at + REASON_OFFSET)).toString();
            return new GetDoneMessage(seq, reason);
        } catch (CharacterCodingException e) {
            throw new MalformedMessageException(TYPE, "a reason that is not UTF-8");
        }
    }
}
