package io.rdmacomm.tcp;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * The frames that follow the {@link Handshake} both ways, big-endian. Offsets count from the frame's first byte:
 *
 * <pre>
 * frame         type  fields (offset type name)                                   length
 * (header)            0 u8 type | 1 u32 payload length (bytes after the header)     5 + payload length
 * DATA          1     5.. stream bytes (at least one)
 * PUT           2     5 u64 op | 13 u64 key | 21 u64 offset | 29.. bytes to place
 * GET           3     5 u64 op | 13 u64 key | 21 u64 offset | 29 u32 count            33
 * GET_RESPONSE  4     5 u64 op | 13.. the bytes read
 * ACK           5     5 u64 op (the PUT was placed)                                  13
 * ERROR         6     5 u64 op | 13.. UTF-8 reason, at most 1024 bytes (refused)
 * HEARTBEAT     7     (nothing: a sign of life from an idle side)                     5
 * </pre>
 *
 * Stream bytes travel only in DATA frames so that remote-memory frames can interleave with them at frame
 * boundaries. HEARTBEAT goes only to a peer that asked for it in the {@link Handshake}. {@link Frame} reads and
 * writes these fields in place.
 */
final class Wire {
    static final byte DATA = 1;
    static final byte PUT = 2;
    static final byte GET = 3;
    static final byte GET_RESPONSE = 4;
    static final byte ACK = 5;
    static final byte ERROR = 6;
    static final byte HEARTBEAT = 7;

    static final int TYPE_OFFSET = 0;
    static final int PAYLOAD_LENGTH_OFFSET = 1;
    static final int HEADER_LENGTH = 5;
    /** In every frame but DATA: the operation the frame belongs to, chosen by its initiator. */
    static final int OP_OFFSET = HEADER_LENGTH;
    static final int KEY_OFFSET = OP_OFFSET + 8;
    static final int REGION_OFFSET_OFFSET = KEY_OFFSET + 8;
    static final int COUNT_OFFSET = REGION_OFFSET_OFFSET + 8;
    /** The fixed part of a PUT, before the bytes to place. */
    static final int PUT_LENGTH = REGION_OFFSET_OFFSET + 8;
    static final int GET_LENGTH = COUNT_OFFSET + 4;
    /** A whole ACK; the fixed part of a GET_RESPONSE or an ERROR. */
    static final int OP_LENGTH = OP_OFFSET + 8;
    static final int MAX_REASON_BYTES = 1024;
    /** The largest payload a PUT's bytes may make. */
    static final int MAX_PUT_BYTES = Integer.MAX_VALUE - (PUT_LENGTH - HEADER_LENGTH);

    private Wire() {
    }

    /**
     * Whether a frame of {@code type} may carry {@code payloadLength} bytes (the length is unsigned on the wire;
     * here, above 2^31 it is negative and refused).
     */
    static boolean wellFormed(byte type, int payloadLength) {
        return switch (type) {
            case DATA -> payloadLength > 0;
            case PUT -> payloadLength >= PUT_LENGTH - HEADER_LENGTH;
            case GET -> payloadLength == GET_LENGTH - HEADER_LENGTH;
            case GET_RESPONSE -> payloadLength >= OP_LENGTH - HEADER_LENGTH;
            case ACK -> payloadLength == OP_LENGTH - HEADER_LENGTH;
            case ERROR -> payloadLength >= OP_LENGTH - HEADER_LENGTH
                    && payloadLength <= OP_LENGTH - HEADER_LENGTH + MAX_REASON_BYTES;
            case HEARTBEAT -> payloadLength == 0;
            default -> false;
        };
    }

    /**
     * How many bytes of a well-formed frame a reader decodes in one piece: the fixed part, or the whole of an ERROR
     * (its reason is short). What follows (stream bytes, bytes to place, bytes read) is moved without decoding.
     */
    static int decodedLength(byte type, int payloadLength) {
        return switch (type) {
            case DATA, HEARTBEAT -> HEADER_LENGTH;
            case PUT -> PUT_LENGTH;
            case GET -> GET_LENGTH;
            case ERROR -> HEADER_LENGTH + payloadLength;
            default -> OP_LENGTH;
        };
    }

    static String typeName(byte type) {
        return switch (type) {
            case DATA -> "DATA";
            case PUT -> "PUT";
            case GET -> "GET";
            case GET_RESPONSE -> "GET_RESPONSE";
            case ACK -> "ACK";
            case ERROR -> "ERROR";
            case HEARTBEAT -> "HEARTBEAT";
            default -> "unknown type 0x" + Integer.toHexString(type & 0xff);
        };
    }

    /**
     * A flyweight over one frame in a buffer: typed getters and encoders of the fields above, by absolute index, so
     * neither the buffer's position nor the heap changes. Re-{@link #wrap}ped for every frame; not thread-safe.
     */
    static final class Frame {
        private ByteBuffer buffer;
        private int offset;

        /** Points this flyweight at the frame starting at {@code index} of {@code b}. */
        Frame wrap(ByteBuffer b, int index) {
            buffer = b;
            offset = index;
            return this;
        }

        byte type() {
            return buffer.get(offset + TYPE_OFFSET);
        }

        int payloadLength() {
            return buffer.getInt(offset + PAYLOAD_LENGTH_OFFSET);
        }

        long op() {
            return buffer.getLong(offset + OP_OFFSET);
        }

        long key() {
            return buffer.getLong(offset + KEY_OFFSET);
        }

        long regionOffset() {
            return buffer.getLong(offset + REGION_OFFSET_OFFSET);
        }

        int count() {
            return buffer.getInt(offset + COUNT_OFFSET);
        }

        /** Sets the payload length of a frame whose payload is complete only now (a DATA frame filled by writes). */
        void payloadLength(int length) {
            buffer.putInt(offset + PAYLOAD_LENGTH_OFFSET, length);
        }

        /** A DATA header for {@code count} stream bytes; returns the bytes written. */
        int data(int count) {
            return header(DATA, count);
        }

        /** A whole HEARTBEAT; returns the bytes written. */
        int heartbeat() {
            return header(HEARTBEAT, 0);
        }

        /** A PUT's fixed part, followed by {@code count} bytes to place; returns the bytes written. */
        int put(long op, long key, long regionOffset, int count) {
            header(PUT, PUT_LENGTH - HEADER_LENGTH + count);
            buffer.putLong(offset + OP_OFFSET, op).putLong(offset + KEY_OFFSET, key)
                    .putLong(offset + REGION_OFFSET_OFFSET, regionOffset);
            return PUT_LENGTH;
        }

        /** A whole GET; returns the bytes written. */
        int get(long op, long key, long regionOffset, int count) {
            header(GET, GET_LENGTH - HEADER_LENGTH);
            buffer.putLong(offset + OP_OFFSET, op).putLong(offset + KEY_OFFSET, key)
                    .putLong(offset + REGION_OFFSET_OFFSET, regionOffset).putInt(offset + COUNT_OFFSET, count);
            return GET_LENGTH;
        }

        /** A GET_RESPONSE's fixed part, followed by the {@code count} bytes read; returns the bytes written. */
        int getResponse(long op, int count) {
            return opFrame(GET_RESPONSE, op, count);
        }

        /** A whole ACK; returns the bytes written. */
        int ack(long op) {
            return opFrame(ACK, op, 0);
        }

        /** A whole ERROR with the first {@code length} bytes of {@code reason} (UTF-8); returns the bytes written. */
        int error(long op, byte[] reason, int length) {
            opFrame(ERROR, op, length);
            buffer.put(offset + OP_LENGTH, reason, 0, length);
            return OP_LENGTH + length;
        }

        /** The reason of an ERROR that is whole in the buffer. */
        String reason() {
            byte[] text = new byte[payloadLength() - (OP_LENGTH - HEADER_LENGTH)];
            buffer.get(offset + OP_LENGTH, text);
            return new String(text, StandardCharsets.UTF_8);
        }

        private int opFrame(byte type, long op, int following) {
            header(type, OP_LENGTH - HEADER_LENGTH + following);
            buffer.putLong(offset + OP_OFFSET, op);
            return OP_LENGTH;
        }

        private int header(byte type, int payloadLength) {
            buffer.put(offset + TYPE_OFFSET, type).putInt(offset + PAYLOAD_LENGTH_OFFSET, payloadLength);
            return HEADER_LENGTH;
        }
    }
}
