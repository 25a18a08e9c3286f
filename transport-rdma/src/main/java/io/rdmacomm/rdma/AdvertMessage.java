package io.rdmacomm.rdma;

import io.rdmacomm.api.RegionDescriptor;
import java.nio.ByteBuffer;

/**
 * ADVERT: a reader blocked on a large direct buffer offers it to the writer, for the bytes from a stream position
 * on; it carries the reader's ring credit too. Decoded into a value: adverts are rare.
 *
 * <pre>
 * offset  0  u8  type 4
 *         1  u32 advert sequence number
 *         5  u64 stream position the buffer is for
 *        13  u64 ring bytes the reader consumed so far (a credit)
 *        21  u64 address of the buffer's first free byte
 *        29  u32 length
 *        33  descriptor of the buffer's registration (to the end)
 * </pre>
 *
 * @param seq the advert's sequence number, which ZDATA, CANCEL and CANCEL_ACK name
 * @param streamPosition the stream position the buffer is for
 * @param ringConsumed the reader's ring credit
 * @param address where the writer writes the first byte
 * @param length how many bytes the buffer takes
 * @param region the registration the buffer lies in
 */
record AdvertMessage(int seq, long streamPosition, long ringConsumed, long address, int length,
        RegionDescriptor region) {
    static final byte TYPE = 4;
    static final int SEQ_OFFSET = 1;
    static final int STREAM_POSITION_OFFSET = 5;
    static final int RING_CONSUMED_OFFSET = 13;
    static final int ADDRESS_OFFSET = 21;
    static final int LENGTH_OFFSET = 29;
    static final int REGION_OFFSET = 33;

    /** This advert's encoded length. */
    int encodedLength() {
        return REGION_OFFSET + region.encodedLength();
    }

    ByteBuffer encode(ByteBuffer dst) {
        dst.clear().put(TYPE).putInt(seq).putLong(streamPosition).putLong(ringConsumed).putLong(address)
                .putInt(length);
        region.writeTo(dst);
        return dst.flip();
    }

    static AdvertMessage decode(ByteBuffer m) throws MalformedMessageException {
        Wire.requireAtLeast(m, TYPE, REGION_OFFSET);
        int at = m.position();
        long streamPosition = m.getLong(at + STREAM_POSITION_OFFSET);
        Wire.requireNonNegative(TYPE, "stream position", streamPosition);
        long ringConsumed = m.getLong(at + RING_CONSUMED_OFFSET);
        Wire.requireNonNegative(TYPE, "ring bytes consumed", ringConsumed);
        int length = m.getInt(at + LENGTH_OFFSET);
        if (length <= 0) {
            throw new MalformedMessageException(TYPE, "length " + length + ", expected at least 1");
        }
        long address = m.getLong(at + ADDRESS_OFFSET);
        RegionDescriptor region = Wire.descriptor(m, TYPE, REGION_OFFSET, "region descriptor");
        if (address - region.address() < 0 || address - region.address() > region.length() - length) {
            throw new MalformedMessageException(TYPE, length + " bytes at address 0x" + Long.toHexString(address)
                    + " outside the advertised region " + region);
        }
        return new AdvertMessage(m.getInt(at + SEQ_OFFSET), streamPosition, ringConsumed, address, length, region);
    }
}
