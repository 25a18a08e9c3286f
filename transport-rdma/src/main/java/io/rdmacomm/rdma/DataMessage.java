package io.rdmacomm.rdma;

import java.nio.ByteBuffer;

/**
 * DATA and DATA_INLINE: stream bytes are in the reader's ring. A DATA follows a one-sided write into the ring and
 * arrives only after the data is placed; a DATA_INLINE (small chunks) carries the bytes itself, and the reader's
 * side places them into its ring at the cursor, so ring and credit accounting are the same for both.
 *
 * <pre>
 * offset  0  u8  type 2 (DATA) or 12 (DATA_INLINE)
 *         1  u64 stream position of the first byte
 *         9  u64 ring cursor: ring bytes written before these (the ring offset is cursor % ring size)
 *        17  u32 length
 *        21  DATA_INLINE only: the {@code length} bytes
 * </pre>
 */
final class DataMessage {
    static final byte DATA = 2;
    static final byte DATA_INLINE = 12;
    static final int STREAM_POSITION_OFFSET = 1;
    static final int RING_CURSOR_OFFSET = 9;
    static final int LENGTH_OFFSET = 17;
    static final int BYTES_OFFSET = 21;
    /** The length of a DATA, and of a DATA_INLINE without its bytes. */
    static final int HEADER_LENGTH = 21;

    private DataMessage() {
    }

    static ByteBuffer encodeData(ByteBuffer dst, long streamPosition, long ringCursor, int length) {
        return header(dst, DATA, streamPosition, ringCursor, length).limit(HEADER_LENGTH);
    }

    /** A DATA_INLINE carrying {@code length} bytes of {@code src} from index {@code from}. */
    static ByteBuffer encodeInline(ByteBuffer dst, long streamPosition, long ringCursor, ByteBuffer src, int from,
            int length) {
        return header(dst, DATA_INLINE, streamPosition, ringCursor, length).put(BYTES_OFFSET, src, from, length)
                .limit(HEADER_LENGTH + length);
    }

    private static ByteBuffer header(ByteBuffer dst, byte type, long streamPosition, long ringCursor, int length) {
        return dst.clear().put(Wire.TYPE_OFFSET, type).putLong(STREAM_POSITION_OFFSET, streamPosition)
                .putLong(RING_CURSOR_OFFSET, ringCursor).putInt(LENGTH_OFFSET, length);
    }

    /**
     * Checks a DATA or DATA_INLINE for a reader whose ring has {@code ringSize} bytes: the segment must lie inside
     * the ring without wrapping, and a DATA_INLINE must carry exactly its length.
     */
    static void check(ByteBuffer m, int ringSize) throws MalformedMessageException {
        byte type = m.get(m.position() + Wire.TYPE_OFFSET);
        if (type == DATA) {
            Wire.requireLength(m, type, HEADER_LENGTH);
        } else {
            Wire.requireAtLeast(m, type, HEADER_LENGTH);
        }
        Wire.requireNonNegative(type, "stream position", streamPosition(m));
        long cursor = ringCursor(m);
        int n = length(m);
        if (cursor < 0 || n <= 0 || (cursor % ringSize) + n > ringSize) {
            throw new MalformedMessageException(type, "ring segment of " + n + " bytes at cursor " + cursor
                    + " outside the " + ringSize + "-byte ring");
        }
        int carried = m.remaining() - HEADER_LENGTH;
        if (type == DATA_INLINE && carried != n) {
            throw new MalformedMessageException(type, "length " + n + " but carries " + carried + " bytes");
        }
    }

    static long streamPosition(ByteBuffer m) {
        return m.getLong(m.position() + STREAM_POSITION_OFFSET);
    }

    static long ringCursor(ByteBuffer m) {
        return m.getLong(m.position() + RING_CURSOR_OFFSET);
    }

    static int length(ByteBuffer m) {
        return m.getInt(m.position() + LENGTH_OFFSET);
    }

    /** The index of a DATA_INLINE's first byte in {@code m}. */
    static int bytesIndex(ByteBuffer m) {
        return m.position() + BYTES_OFFSET;
    }
}
