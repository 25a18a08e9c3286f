package io.rdmacomm.rdma;

import java.nio.ByteBuffer;

/**
 * ACK: the peer processed an ANNOUNCE or a REVOKE of a region, a CLOSE (region id 0), or placed a put
 * (PUT_PLACED; the region id field carries the put's sequence number).
 *
 * <pre>
 * offset 0  u8  type 11
 *        1  u8  the acknowledged type: ANNOUNCE 9, REVOKE 10, CLOSE 8 or PUT_PLACED 16
 *        2  u32 region id (0 for CLOSE)
 * </pre>
 */
final class AckMessage {
    static final byte TYPE = 11;
    static final int ACKNOWLEDGED_OFFSET = 1;
    static final int REGION_ID_OFFSET = 2;
    static final int LENGTH = 6;

    private AckMessage() {
    }

    static ByteBuffer encode(ByteBuffer dst, byte acknowledged, int regionId) {
        return dst.clear().put(Wire.TYPE_OFFSET, TYPE).put(ACKNOWLEDGED_OFFSET, acknowledged)
                .putInt(REGION_ID_OFFSET, regionId).limit(LENGTH);
    }

    static void check(ByteBuffer m) throws MalformedMessageException {
        Wire.requireLength(m, TYPE, LENGTH);
        byte acknowledged = acknowledged(m);
        if (acknowledged != AnnounceMessage.TYPE && acknowledged != RevokeMessage.TYPE
                && acknowledged != CloseMessage.TYPE && acknowledged != PutPlacedMessage.TYPE) {
            throw new MalformedMessageException(TYPE, "acknowledged type " + acknowledged
                    + ", expected ANNOUNCE 9, REVOKE 10, CLOSE 8 or PUT_PLACED 16");
        }
        if (acknowledged == CloseMessage.TYPE && regionId(m) != 0) {
            throw new MalformedMessageException(TYPE, "region id " + regionId(m) + " with CLOSE, expected 0");
        }
    }

    static byte acknowledged(ByteBuffer m) {
        return m.get(m.position() + ACKNOWLEDGED_OFFSET);
    }

    static int regionId(ByteBuffer m) {
        return m.getInt(m.position() + REGION_ID_OFFSET);
    }
}
