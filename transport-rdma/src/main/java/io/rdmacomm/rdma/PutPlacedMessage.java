package io.rdmacomm.rdma;

import java.nio.ByteBuffer;

/**
 * PUT_PLACED: the notification of a put into a region whose owner withholds one-sided access (its descriptor has no
 * provider key): the owner's provider delivers it once it checked and placed the bytes, and the owner's engine
 * answers with an ACK naming it, so the put returns only once its bytes are in the owner's memory (a flush of an
 * active message says only that it left, not that its receiver placed it).
 *
 * <pre>
 * offset 0  u8  type 16
 *        1  u32 sequence number, which the ACK names in its region id field
 * </pre>
 */
final class PutPlacedMessage {
    static final byte TYPE = 16;
    static final int SEQ_OFFSET = 1;
    static final int LENGTH = 5;

    private PutPlacedMessage() {
    }

    static ByteBuffer encode(ByteBuffer dst, int seq) {
        return dst.clear().put(Wire.TYPE_OFFSET, TYPE).putInt(SEQ_OFFSET, seq).limit(LENGTH);
    }

    static void check(ByteBuffer m) throws MalformedMessageException {
        Wire.requireLength(m, TYPE, LENGTH);
    }

    static int seq(ByteBuffer m) {
        return m.getInt(m.position() + SEQ_OFFSET);
    }
}
