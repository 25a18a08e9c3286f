package io.rdmacomm.rdma;

import io.rdmacomm.api.HandshakeException;
import io.rdmacomm.api.RegionDescriptor;
import java.nio.ByteBuffer;
import java.util.HexFormat;

/**
 * The control messages of the rdma stream protocol, all big-endian, each starting with a one-byte type.
 *
 * <pre>
 * HELLO      1 | u32 magic 'RDMC' | u16 version | descriptor of the sender's receive ring
 * DATA       2 | u64 stream position | u64 ring cursor | u32 length      (after a ring write)
 * CREDIT     3 | u64 ring bytes consumed
 * ADVERT     4 | u32 seq | u64 stream position | u64 ring bytes consumed | u64 address | u32 length | descriptor
 * ZDATA      5 | u32 seq | u64 stream position | u32 length             (after a write into an advertised buffer)
 * CANCEL     6 | u32 seq
 * CANCEL_ACK 7 | u32 seq
 * CLOSE      8 | u64 final stream position
 * ANNOUNCE   9 | u32 region id | descriptor                              (a region registered for the peer)
 * REVOKE    10 | u32 region id
 * ACK       11 | u8 acknowledged type | u32 region id (ANNOUNCE, REVOKE; CLOSE with id 0, sent on its arrival)
 * DATA_INLINE 12 | u64 stream position | u64 ring cursor | u32 length | the bytes (small ring chunks; the reader's
 *                  side places them into its ring at the cursor, so ring and credit accounting are as for DATA)
 * </pre>
 */
final class Wire {
    static final int MAGIC = 0x52444D43;
    static final short VERSION = 1;

    static final byte HELLO = 1;
    static final byte DATA = 2;
    static final byte CREDIT = 3;
    static final byte ADVERT = 4;
    static final byte ZDATA = 5;
    static final byte CANCEL = 6;
    static final byte CANCEL_ACK = 7;
    static final byte CLOSE = 8;
    static final byte ANNOUNCE = 9;
    static final byte REVOKE = 10;
    static final byte ACK = 11;
    static final byte DATA_INLINE = 12;

    static final int DATA_INLINE_HEADER = 1 + 8 + 8 + 4;

    static final int HELLO_HEADER = 1 + 4 + 2;

    private Wire() {
    }

    static ByteBuffer hello(RegionDescriptor ring) {
        ByteBuffer b = ByteBuffer.allocate(HELLO_HEADER + ring.encodedLength());
        b.put(HELLO).putInt(MAGIC).putShort(VERSION);
        ring.writeTo(b);
        return b.flip();
    }

    /**
     * Validates a peer's HELLO and returns its ring descriptor.
     *
     * @throws HandshakeException naming what arrived instead
     */
    static RegionDescriptor parseHello(ByteBuffer msg, String peer) throws HandshakeException {
        ByteBuffer m = msg.duplicate();
        if (m.remaining() < HELLO_HEADER || m.get(m.position()) != HELLO) {
            throw new HandshakeException("handshake from " + peer + ": expected an rdmacomm HELLO (type 1, magic"
                    + " 0x52444d43 'RDMC', version " + VERSION + "), got " + describe(msg));
        }
        m.get();
        int magic = m.getInt();
        if (magic != MAGIC) {
            throw new HandshakeException("handshake from " + peer + ": expected magic 0x52444d43 ('RDMC'), got 0x"
                    + Integer.toHexString(magic) + " (" + describe(msg) + ")");
        }
        short version = m.getShort();
        if (version != VERSION) {
            throw new HandshakeException("handshake from " + peer + ": protocol version " + version
                    + ", expected " + VERSION);
        }
        try {
            return RegionDescriptor.readFrom(m);
        } catch (IllegalArgumentException e) {
            throw new HandshakeException("handshake from " + peer + ": bad ring descriptor: " + e.getMessage(), e);
        }
    }

    /** The first bytes of a message in hex, for error messages. */
    static String describe(ByteBuffer msg) {
        int n = Math.min(msg.remaining(), 16);
        byte[] head = new byte[n];
        msg.duplicate().get(head);
        return msg.remaining() + " bytes " + HexFormat.ofDelimiter(" ").formatHex(head)
                + (msg.remaining() > n ? " …" : "");
    }
}
