package io.rdmacomm.rdma;

import java.nio.ByteBuffer;

/**
 * REVOKE: a region announced before is being deregistered; the peer answers with an ACK once none of its
 * operations on the region is in flight any more.
 *
 * <pre>
 * offset 0  u8  type 10
 *        1  u32 region id
 * </pre>
 */
final class RevokeMessage {
    static final byte TYPE = 10;
    static final int REGION_ID_OFFSET = 1;
    static final int LENGTH = 5;

    private RevokeMessage() {
    }

    static ByteBuffer encode(ByteBuffer dst, int regionId) {
        return dst.clear().put(Wire.TYPE_OFFSET, TYPE).putInt(REGION_ID_OFFSET, regionId).limit(LENGTH);
    }

    static void check(ByteBuffer m) throws MalformedMessageException {
        Wire.requireLength(m, TYPE, LENGTH);
    }

    static int regionId(ByteBuffer m) {
        return m.getInt(m.position() + REGION_ID_OFFSET);
    }
}
