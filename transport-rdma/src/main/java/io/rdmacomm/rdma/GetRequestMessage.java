package io.rdmacomm.rdma;

import io.rdmacomm.api.RegionDescriptor;
import java.nio.ByteBuffer;

/**
 * GET_REQ: asks the owner of a region for bytes of it, where the owner withholds one-sided reads (its provider sent
 * no key: UCX on shared memory or tcp, whose transports do not check remote bounds). The owner checks the region's
 * bounds and REMOTE_READ itself, writes the bytes into the requester's destination and sends GET_DONE as the
 * write's notification, or GET_DONE refusing. Decoded into a value: gets are not the stream's hot path.
 *
 * <pre>
 * offset  0  u8  type 14
 *         1  u32 sequence number, which GET_DONE names
 *         5  u32 region id (the first four bytes of the region's key)
 *         9  u64 offset in the region
 *        17  u32 length
 *        21  u64 destination address, in the requester's registration below
 *        29  descriptor of the destination's registration (to the end)
 * </pre>
 *
 * @param seq the request's sequence number
 * @param regionId the owner's region
 * @param offset where in the region the bytes start
 * @param length how many bytes
 * @param destination where the owner writes the first byte
 * @param registration the requester's registration the destination lies in
 */
record GetRequestMessage(int seq, int regionId, long offset, int length, long destination,
        RegionDescriptor registration) {
    static final byte TYPE = 14;
    static final int SEQ_OFFSET = 1;
    static final int REGION_ID_OFFSET = 5;
    static final int OFFSET_OFFSET = 9;
    static final int LENGTH_OFFSET = 17;
    static final int DESTINATION_OFFSET = 21;
    static final int REGISTRATION_OFFSET = 29;

    int encodedLength() {
        return REGISTRATION_OFFSET + registration.encodedLength();
    }

    ByteBuffer encode(ByteBuffer dst) {
        dst.clear().put(TYPE).putInt(seq).putInt(regionId).putLong(offset).putInt(length).putLong(destination);
        registration.writeTo(dst);
        return dst.flip();
    }

    /**
     * Reads a request. Only its form is checked here (offset and length against the region are the owner's check,
     * which answers with a refusal instead of failing the connection).
     */
    static GetRequestMessage decode(ByteBuffer m) throws MalformedMessageException {
        Wire.requireAtLeast(m, TYPE, REGISTRATION_OFFSET);
        int at = m.position();
        long offset = m.getLong(at + OFFSET_OFFSET);
        Wire.requireNonNegative(TYPE, "offset", offset);
        int length = m.getInt(at + LENGTH_OFFSET);
        if (length <= 0) {
            throw new MalformedMessageException(TYPE, "length " + length + ", expected at least 1");
        }
        long destination = m.getLong(at + DESTINATION_OFFSET);
        RegionDescriptor registration = Wire.descriptor(m, TYPE, REGISTRATION_OFFSET, "destination descriptor");
        if (destination - registration.address() < 0
                || destination - registration.address() > registration.length() - length) {
            throw new MalformedMessageException(TYPE, length + " bytes at address 0x" + Long.toHexString(destination)
                    + " outside the destination's registration " + registration);
        }
        return new GetRequestMessage(m.getInt(at + SEQ_OFFSET), m.getInt(at + REGION_ID_OFFSET), offset, length,
                destination, registration);
    }
}
