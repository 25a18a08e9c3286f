package io.rdmacomm.rdma;

import io.rdmacomm.api.RegionDescriptor;
import java.lang.invoke.MethodHandles;
import java.nio.ByteBuffer;
import java.util.HexFormat;

/**
 * The control messages of the rdma stream protocol: each is big-endian, starts with a one-byte type and has one
 * class that encodes it into a caller's buffer and checks and reads it in place (no copy, no allocation on the
 * hot path: DATA, DATA_INLINE, CREDIT).
 *
 * <pre>
 * HELLO 1 ({@link HelloMessage})       DATA 2, DATA_INLINE 12 ({@link DataMessage})   CREDIT 3 ({@link CreditMessage})
 * ADVERT 4 ({@link AdvertMessage})     ZDATA 5 ({@link ZeroCopyDataMessage})         CANCEL 6, CANCEL_ACK 7 ({@link CancelMessage})
 * CLOSE 8 ({@link CloseMessage})       ANNOUNCE 9 ({@link AnnounceMessage})          REVOKE 10 ({@link RevokeMessage})
 * ACK 11 ({@link AckMessage})              HEARTBEAT 13 ({@link HeartbeatMessage})
 * GET_REQ 14 ({@link GetRequestMessage})   GET_DONE 15 ({@link GetDoneMessage})       PUT_PLACED 16 ({@link PutPlacedMessage})
 * </pre>
 *
 * Encoders write the message from index 0 of a big-endian buffer and return it with position 0 and the message's
 * length as limit. Readers take a buffer whose position is the message's first byte and whose limit is its end,
 * and read by absolute index only (a provider may reuse the buffer after the handler returns).
 */
final class Wire {
    static final int TYPE_OFFSET = 0;

    private Wire() {
    }

    /** The type of a message; an empty message is malformed. */
    /**
     * Loads and initializes every message class, so that the first message of a kind in a connection's life (the
     * first CREDIT comes after half a ring of data, a CLOSE at the end) does not load a class on the data path:
     * that cost a few KB of allocation and a class-loading pause in the middle of a steady stream.
     */
    static void preload() {
        MethodHandles.Lookup lookup = MethodHandles.lookup();
        for (Class<?> c : new Class<?>[] {AckMessage.class, AdvertMessage.class, AnnounceMessage.class,
                CancelMessage.class, CloseMessage.class, CreditMessage.class, DataMessage.class,
                GetDoneMessage.class, GetRequestMessage.class, HeartbeatMessage.class, HelloMessage.class,
                PutPlacedMessage.class, RevokeMessage.class, ZeroCopyDataMessage.class,
                MalformedMessageException.class}) {
            try {
                lookup.ensureInitialized(c);
            } catch (IllegalAccessException e) {
                throw new AssertionError(e);
            }
        }
    }

    static byte type(ByteBuffer m) throws MalformedMessageException {
        if (!m.hasRemaining()) {
            throw new MalformedMessageException((byte) 0, "empty message");
        }
        return m.get(m.position() + TYPE_OFFSET);
    }

    /** The name of a message type ({@code "DATA"}), or {@code "type 99"} for an unknown one. */
    static String name(byte type) {
        return switch (type) {
            case HelloMessage.TYPE -> "HELLO";
            case DataMessage.DATA -> "DATA";
            case CreditMessage.TYPE -> "CREDIT";
            case AdvertMessage.TYPE -> "ADVERT";
            case ZeroCopyDataMessage.TYPE -> "ZDATA";
            case CancelMessage.CANCEL -> "CANCEL";
            case CancelMessage.CANCEL_ACK -> "CANCEL_ACK";
            case CloseMessage.TYPE -> "CLOSE";
            case AnnounceMessage.TYPE -> "ANNOUNCE";
            case RevokeMessage.TYPE -> "REVOKE";
            case AckMessage.TYPE -> "ACK";
            case DataMessage.DATA_INLINE -> "DATA_INLINE";
            case HeartbeatMessage.TYPE -> "HEARTBEAT";
            case GetRequestMessage.TYPE -> "GET_REQ";
            case GetDoneMessage.TYPE -> "GET_DONE";
            case PutPlacedMessage.TYPE -> "PUT_PLACED";
            default -> "type " + type;
        };
    }

    /** A message of fixed length must have exactly that length. */
    static void requireLength(ByteBuffer m, byte type, int length) throws MalformedMessageException {
        if (m.remaining() != length) {
            throw new MalformedMessageException(type, m.remaining() + " bytes, expected " + length);
        }
    }

    /** A message with a variable part must at least hold its fixed part. */
    static void requireAtLeast(ByteBuffer m, byte type, int length) throws MalformedMessageException {
        if (m.remaining() < length) {
            throw new MalformedMessageException(type, m.remaining() + " bytes, expected at least " + length);
        }
    }

    static void requireNonNegative(byte type, String field, long value) throws MalformedMessageException {
        if (value < 0) {
            throw new MalformedMessageException(type, "negative " + field + " " + value);
        }
    }

    /**
     * Reads the region descriptor that fills a message from {@code offset} to its end.
     *
     * @param field the descriptor's name in error messages ({@code "ring descriptor"})
     */
    static RegionDescriptor descriptor(ByteBuffer m, byte type, int offset, String field)
            throws MalformedMessageException {
        ByteBuffer d = m.duplicate().position(m.position() + offset);
        RegionDescriptor descriptor;
        try {
            descriptor = RegionDescriptor.readFrom(d);
        } catch (IllegalArgumentException e) {
            throw new MalformedMessageException(type, "bad " + field + ": " + e.getMessage());
        }
        if (d.hasRemaining()) {
            throw new MalformedMessageException(type, d.remaining() + " bytes after the " + field);
        }
        return descriptor;
    }

    /** The first bytes of a message in hex, for error messages. */
    static String describe(ByteBuffer msg) {
        int n = Math.min(msg.remaining(), 16);
        byte[] head = new byte[n];
        msg.get(msg.position(), head);
        return msg.remaining() + " bytes " + HexFormat.ofDelimiter(" ").formatHex(head)
                + (msg.remaining() > n ? " …" : "");
    }
}
