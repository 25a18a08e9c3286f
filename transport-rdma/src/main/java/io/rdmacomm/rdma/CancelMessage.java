package io.rdmacomm.rdma;

import java.nio.ByteBuffer;

/**
 * CANCEL and CANCEL_ACK: a reader whose read timed out takes its advert back (CANCEL); a writer that has not used
 * the advert answers CANCEL_ACK and never uses it, one that has sent its ZDATA already lets that answer.
 *
 * <pre>
 * offset 0  u8  type 6 (CANCEL) or 7 (CANCEL_ACK)
 *        1  u32 sequence number of the advert
 * </pre>
 */
final class CancelMessage {
    static final byte CANCEL = 6;
    static final byte CANCEL_ACK = 7;
    static final int SEQ_OFFSET = 1;
    static final int LENGTH = 5;

    private CancelMessage() {
    }

    static ByteBuffer encode(ByteBuffer dst, byte type, int seq) {
        return dst.clear().put(Wire.TYPE_OFFSET, type).putInt(SEQ_OFFSET, seq).limit(LENGTH);
    }

    static void check(ByteBuffer m) throws MalformedMessageException {
        Wire.requireLength(m, m.get(m.position() + Wire.TYPE_OFFSET), LENGTH);
    }

    static int seq(ByteBuffer m) {
        return m.getInt(m.position() + SEQ_OFFSET);
    }
}
