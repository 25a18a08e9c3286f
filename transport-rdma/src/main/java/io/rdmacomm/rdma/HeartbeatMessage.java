package io.rdmacomm.rdma;

import java.nio.ByteBuffer;

/**
 * HEARTBEAT: a sign of life from a side that has sent nothing for the period its peer asked for in the HELLO.
 *
 * <pre>
 * offset 0  u8  type 13
 * </pre>
 */
final class HeartbeatMessage {
    static final byte TYPE = 13;
    static final int LENGTH = 1;

    private HeartbeatMessage() {
    }

    static ByteBuffer encode(ByteBuffer dst) {
        return dst.clear().put(Wire.TYPE_OFFSET, TYPE).limit(LENGTH);
    }

    static void check(ByteBuffer m) throws MalformedMessageException {
        Wire.requireLength(m, TYPE, LENGTH);
    }
}
