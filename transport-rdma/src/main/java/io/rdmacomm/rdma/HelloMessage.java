package io.rdmacomm.rdma;

import io.rdmacomm.api.HandshakeException;
import io.rdmacomm.api.RegionDescriptor;
import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;

/**
 * HELLO, the first message of each side: who speaks the protocol, how often it wants the peer's heartbeats, and
 * where its receive ring is.
 *
 * <pre>
 * offset 0  u8  type 1
 *        1  u32 magic 0x52444D43 'RDMC'
 *        5  u16 protocol version
 *        7  u32 heartbeat period the sender asks for, in ms (0: none; version 2 on)
 *       11  descriptor of the sender's receive ring (to the end)
 * </pre>
 *
 * Version 2 added the heartbeat period (version 1 had none and its ring at offset 7; HELLO has no room for an
 * optional field, so a version 1 peer is refused with both versions named). Heartbeats flow both ways when both
 * sides ask for them, each side at the period its peer asked for.
 */
final class HelloMessage {
    static final byte TYPE = 1;
    static final int MAGIC = 0x52444D43;
    static final short VERSION = 2;
    static final int MAGIC_OFFSET = 1;
    static final int VERSION_OFFSET = 5;
    static final int HEARTBEAT_OFFSET = 7;
    static final int RING_OFFSET = 11;

    private HelloMessage() {
    }

    /** The length of a HELLO announcing {@code ring}. */
    static int length(RegionDescriptor ring) {
        return RING_OFFSET + ring.encodedLength();
    }

    static ByteBuffer encode(ByteBuffer dst, RegionDescriptor ring, long heartbeatNanos) {
        long millis = heartbeatNanos == 0 ? 0 : Math.max(1, TimeUnit.NANOSECONDS.toMillis(heartbeatNanos));
        dst.clear().put(TYPE).putInt(MAGIC).putShort(VERSION).putInt((int) Math.min(millis, 0xFFFF_FFFFL)); // u32
        ring.writeTo(dst);
        return dst.flip();
    }

    /** The heartbeat period a checked HELLO asks for, in nanoseconds; 0: none. */
    static long heartbeat(ByteBuffer m) {
        return TimeUnit.MILLISECONDS.toNanos(Integer.toUnsignedLong(m.getInt(m.position() + HEARTBEAT_OFFSET)));
    }

    /**
     * Checks a peer's HELLO and returns its ring descriptor.
     *
     * @throws HandshakeException naming what arrived instead
     */
    static RegionDescriptor ring(ByteBuffer m, String peer) throws HandshakeException {
        int at = m.position();
        if (m.remaining() < RING_OFFSET || m.get(at) != TYPE) {
            throw new HandshakeException("handshake from " + peer + ": expected an rdmacomm HELLO (type 1, magic"
                    + " 0x52444d43 'RDMC', version " + VERSION + "), got " + Wire.describe(m));
        }
        int magic = m.getInt(at + MAGIC_OFFSET);
        if (magic != MAGIC) {
            throw new HandshakeException("handshake from " + peer + ": expected magic 0x52444d43 ('RDMC'), got 0x"
                    + Integer.toHexString(magic) + " (" + Wire.describe(m) + ")");
        }
        short version = m.getShort(at + VERSION_OFFSET);
        if (version != VERSION) {
            throw new HandshakeException("handshake from " + peer + ": protocol version " + version
                    + ", expected " + VERSION);
        }
        try {
            return Wire.descriptor(m, TYPE, RING_OFFSET, "ring descriptor");
        } catch (MalformedMessageException e) {
            throw new HandshakeException("handshake from " + peer + ": bad ring descriptor: " + e.getMessage(), e);
        }
    }
}
