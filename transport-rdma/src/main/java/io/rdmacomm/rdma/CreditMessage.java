package io.rdmacomm.rdma;

import java.nio.ByteBuffer;

/**
 * CREDIT: the reader returns ring space; the writer may fill the ring up to this many bytes past it.
 *
 * <pre>
 * offset 0  u8  type 3
 *        1  u64 ring bytes the reader consumed so far
 * </pre>
 */
final class CreditMessage {
    static final byte TYPE = 3;
    static final int RING_CONSUMED_OFFSET = 1;
    static final int LENGTH = 9;

    private CreditMessage() {
    }

    static ByteBuffer encode(ByteBuffer dst, long ringConsumed) {
        return dst.clear().put(Wire.TYPE_OFFSET, TYPE).putLong(RING_CONSUMED_OFFSET, ringConsumed).limit(LENGTH);
    }

    static void check(ByteBuffer m) throws MalformedMessageException {
        Wire.requireLength(m, TYPE, LENGTH);
        Wire.requireNonNegative(TYPE, "ring bytes consumed", ringConsumed(m));
    }

    static long ringConsumed(ByteBuffer m) {
        return m.getLong(m.position() + RING_CONSUMED_OFFSET);
    }
}
