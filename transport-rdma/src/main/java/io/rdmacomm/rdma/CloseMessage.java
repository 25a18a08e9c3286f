package io.rdmacomm.rdma;

import java.nio.ByteBuffer;

/**
 * CLOSE: the writer's stream ends; the peer answers with an ACK of CLOSE on its arrival.
 *
 * <pre>
 * offset 0  u8  type 8
 *        1  u64 final stream position (the number of bytes written)
 * </pre>
 */
final class CloseMessage {
    static final byte TYPE = 8;
    static final int FINAL_POSITION_OFFSET = 1;
    static final int LENGTH = 9;

    private CloseMessage() {
    }

    static ByteBuffer encode(ByteBuffer dst, long finalPosition) {
        return dst.clear().put(Wire.TYPE_OFFSET, TYPE).putLong(FINAL_POSITION_OFFSET, finalPosition).limit(LENGTH);
    }

    static void check(ByteBuffer m) throws MalformedMessageException {
        Wire.requireLength(m, TYPE, LENGTH);
        Wire.requireNonNegative(TYPE, "final stream position", finalPosition(m));
    }

    static long finalPosition(ByteBuffer m) {
        return m.getLong(m.position() + FINAL_POSITION_OFFSET);
    }
}
