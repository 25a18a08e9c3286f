package io.rdmacomm.rdma;

import io.rdmacomm.api.RegionDescriptor;
import java.nio.ByteBuffer;

/**
 * ANNOUNCE: a region registered for the peer, before its descriptor is handed out; the peer answers with an ACK.
 * The descriptor's key is the region id followed by the provider's key.
 *
 * <pre>
 * offset 0  u8  type 9
 *        1  u32 region id
 *        5  the region's descriptor (to the end)
 * </pre>
 *
 * @param regionId the id, also the first four bytes of the descriptor's key
 * @param region the descriptor the application hands out
 */
record AnnounceMessage(int regionId, RegionDescriptor region) {
    static final byte TYPE = 9;
    static final int REGION_ID_OFFSET = 1;
    static final int REGION_OFFSET = 5;
    /** Bytes of the region id at the start of a descriptor's key. */
    static final int KEY_ID_BYTES = 4;

    int encodedLength() {
        return REGION_OFFSET + region.encodedLength();
    }

    ByteBuffer encode(ByteBuffer dst) {
        dst.clear().put(TYPE).putInt(regionId);
        region.writeTo(dst);
        return dst.flip();
    }

    static AnnounceMessage decode(ByteBuffer m) throws MalformedMessageException {
        Wire.requireAtLeast(m, TYPE, REGION_OFFSET);
        int id = m.getInt(m.position() + REGION_ID_OFFSET);
        RegionDescriptor region = Wire.descriptor(m, TYPE, REGION_OFFSET, "region descriptor");
        byte[] key = region.key();
        if (key.length < KEY_ID_BYTES || ByteBuffer.wrap(key).getInt() != id) {
            throw new MalformedMessageException(TYPE, "region id " + id + " is not the start of the key of " + region);
        }
        return new AnnounceMessage(id, region);
    }
}
