package io.rdmacomm.tcp;

import io.rdmacomm.api.HandshakeException;
import java.nio.ByteBuffer;
import java.util.HexFormat;

/**
 * The wire format, big-endian throughout.
 *
 * <pre>
 * handshake, client to server:  u32 magic 0x52444354 ('RDCT') | u16 version | u16 flags (reserved, 0)
 * handshake, server to client:  u32 magic 0x52444354          | u16 version | u16 status (0 ok, 1 version refused)
 * then frames both ways:        u8 type | u32 payload length | payload
 *   DATA         stream bytes
 *   PUT          u64 op | u64 key | u64 offset | bytes to place
 *   GET          u64 op | u64 key | u64 offset | u32 count
 *   GET_RESPONSE u64 op | the bytes read
 *   ACK          u64 op                          (a PUT was placed)
 *   ERROR        u64 op | UTF-8 reason           (a PUT or GET was refused)
 * </pre>
 *
 * Stream bytes travel only in DATA frames so that remote-memory frames can interleave with them at frame
 * boundaries.
 */
final class Wire {
    static final int MAGIC = 0x52444354;
    static final short VERSION = 1;
    static final int HANDSHAKE_BYTES = 8;
    static final short STATUS_OK = 0;
    static final short STATUS_VERSION_REFUSED = 1;

    static final int HEADER_BYTES = 5;
    static final byte DATA = 1;
    static final byte PUT = 2;
    static final byte GET = 3;
    static final byte GET_RESPONSE = 4;
    static final byte ACK = 5;
    static final byte ERROR = 6;

    /** op + key + offset, before a PUT's bytes. */
    static final int PUT_PREFIX = 24;
    /** op + key + offset + count. */
    static final int GET_BYTES = 28;
    /** op, before a GET_RESPONSE's bytes or an ERROR's reason. */
    static final int OP_BYTES = 8;
    static final int MAX_ERROR_BYTES = OP_BYTES + 1024;

    private Wire() {
    }

    static void putHandshake(ByteBuffer dst, short flagsOrStatus) {
        dst.putInt(MAGIC).putShort(VERSION).putShort(flagsOrStatus);
    }

    /** Whether bytes {@code 0..n} of {@code b} (absolute) can still be the start of our magic number. */
    static boolean magicPrefixMatches(ByteBuffer b, int n) {
        for (int i = 0; i < Math.min(n, 4); i++) {
            if (b.get(i) != (byte) (MAGIC >>> (24 - 8 * i))) {
                return false;
            }
        }
        return true;
    }

    /** The first bytes (absolute {@code 0..n}) in hex, for messages about what a peer sent. */
    static String hex(ByteBuffer b, int n) {
        byte[] bytes = new byte[Math.min(n, 32)];
        for (int i = 0; i < bytes.length; i++) {
            bytes[i] = b.get(i);
        }
        return n == 0 ? "nothing" : HexFormat.ofDelimiter(" ").formatHex(bytes) + (n > bytes.length ? " …" : "");
    }

    /**
     * Validates a complete client handshake (absolute bytes 0..7 of {@code b}).
     *
     * @return null if acceptable, else why not
     */
    static HandshakeException checkClientHello(ByteBuffer b, String peer) {
        if (b.getInt(0) != MAGIC) {
            return badMagic(b, HANDSHAKE_BYTES, "peer " + peer);
        }
        short version = b.getShort(4);
        if (version != VERSION) {
            return new HandshakeException("peer " + peer + " speaks rdmacomm tcp protocol version " + version
                    + ", this server speaks version " + VERSION);
        }
        return null;
    }

    /** The peer's first {@code n} bytes (absolute) are not our handshake. */
    static HandshakeException badMagic(ByteBuffer b, int n, String who) {
        return new HandshakeException(who + " does not speak the rdmacomm tcp protocol: expected a handshake"
                + " starting 52 44 43 54 ('RDCT'), got " + hex(b, n));
    }

    static HandshakeException checkServerReply(ByteBuffer b, int n, String where) {
        if (!magicPrefixMatches(b, n)) {
            return badMagic(b, n, where);
        }
        if (n < HANDSHAKE_BYTES) {
            return new HandshakeException(where + " closed the connection during the handshake after " + n
                    + " of " + HANDSHAKE_BYTES + " bytes: " + hex(b, n));
        }
        if (b.getInt(0) != MAGIC) {
            return badMagic(b, n, where);
        }
        short version = b.getShort(4);
        short status = b.getShort(6);
        if (status == STATUS_VERSION_REFUSED || version != VERSION) {
            return new HandshakeException(where + " speaks rdmacomm tcp protocol version " + version
                    + " and refused version " + VERSION);
        }
        if (status != STATUS_OK) {
            return new HandshakeException(where + " answered the handshake with unknown status " + status);
        }
        return null;
    }

    static String typeName(byte type) {
        return switch (type) {
            case DATA -> "DATA";
            case PUT -> "PUT";
            case GET -> "GET";
            case GET_RESPONSE -> "GET_RESPONSE";
            case ACK -> "ACK";
            case ERROR -> "ERROR";
            default -> "unknown type 0x" + Integer.toHexString(type & 0xff);
        };
    }
}
