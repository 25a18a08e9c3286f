package io.rdmacomm.rdma;

import java.nio.ByteBuffer;

/**
 * ZDATA: the writer placed bytes straight into an advertised buffer; arrives only after they are placed.
 *
 * <pre>
 * offset  0  u8  type 5
 *         1  u32 sequence number of the advert used
 *         5  u64 stream position of the first byte
 *        13  u32 length
 * </pre>
 */
final class ZeroCopyDataMessage {
    static final byte TYPE = 5;
    static final int SEQ_OFFSET = 1;
    static final int STREAM_POSITION_OFFSET = 5;
    static final int LENGTH_OFFSET = 13;
    static final int LENGTH = 17;

    private ZeroCopyDataMessage() {
    }

    static ByteBuffer encode(ByteBuffer dst, int seq, long streamPosition, int length) {
        return dst.clear().put(Wire.TYPE_OFFSET, TYPE).putInt(SEQ_OFFSET, seq)
                .putLong(STREAM_POSITION_OFFSET, streamPosition).putInt(LENGTH_OFFSET, length).limit(LENGTH);
    }

    static void check(ByteBuffer m) throws MalformedMessageException {
        Wire.requireLength(m, TYPE, LENGTH);
        Wire.requireNonNegative(TYPE, "stream position", streamPosition(m));
        int n = length(m);
        if (n <= 0) {
            throw new MalformedMessageException(TYPE, "length " + n + ", expected at least 1");
        }
    }

    static int seq(ByteBuffer m) {
        return m.getInt(m.position() + SEQ_OFFSET);
    }

    static long streamPosition(ByteBuffer m) {
        return m.getLong(m.position() + STREAM_POSITION_OFFSET);
    }

    static int length(ByteBuffer m) {
        return m.getInt(m.position() + LENGTH_OFFSET);
    }
}
