package io.rdmacomm.rdma;

/**
 * Notified ring data not read yet: {stream position, ring cursor, length} triples in stream order, held in
 * primitive arrays so the steady state allocates nothing. Notifications may arrive out of order; {@link #add}
 * keeps the queue sorted by stream position. Not thread-safe: the connection guards it.
 */
final class Segments {
    private long[] pos = new long[16];
    private long[] cursor = new long[16];
    private int[] length = new int[16];
    private int head;
    private int size;

    boolean isEmpty() {
        return size == 0;
    }

    int size() {
        return size;
    }

    /** Stream position of the first segment; only when not empty. */
    long firstPos() {
        return pos[head];
    }

    long firstCursor() {
        return cursor[head];
    }

    int firstLength() {
        return length[head];
    }

    /**
     * Bytes readable in order from stream position {@code from}: the segments that follow each other from there
     * without a gap, capped at {@link Integer#MAX_VALUE}.
     */
    int contiguousFrom(long from) {
        long next = from;
        int mask = pos.length - 1;
        for (int i = 0; i < size; i++) {
            int at = (head + i) & mask;
            if (pos[at] != next) {
                break;
            }
            next += length[at];
        }
        return (int) Math.min(Integer.MAX_VALUE, next - from);
    }

    /** Consumes {@code n} bytes (at most {@link #firstLength()}) from the front of the first segment. */
    void consume(int n) {
        if (n < 0 || n > length[head] || size == 0) {
            throw new IllegalArgumentException("consume " + n + " of a segment of " + (size == 0 ? 0 : length[head]));
        }
        pos[head] += n;
        cursor[head] += n;
        length[head] -= n;
        if (length[head] == 0) {
            head = (head + 1) & (pos.length - 1);
            size--;
        }
    }

    /** Adds a segment, in stream-position order (at the end unless it arrived early). */
    void add(long streamPos, long ringCursor, int len) {
        if (size == pos.length) {
            grow();
        }
        int mask = pos.length - 1;
        int i = size;
        // shift later segments up by one; in order arrivals do not enter the loop
        while (i > 0 && pos[(head + i - 1) & mask] > streamPos) {
            int from = (head + i - 1) & mask;
            int to = (head + i) & mask;
            pos[to] = pos[from];
            cursor[to] = cursor[from];
            length[to] = length[from];
            i--;
        }
        int at = (head + i) & mask;
        pos[at] = streamPos;
        cursor[at] = ringCursor;
        length[at] = len;
        size++;
    }

    private void grow() {
        int n = pos.length;
        long[] p = new long[n * 2];
        long[] c = new long[n * 2];
        int[] l = new int[n * 2];
        for (int i = 0; i < size; i++) {
            int from = (head + i) & (n - 1);
            p[i] = pos[from];
            c[i] = cursor[from];
            l[i] = length[from];
        }
        pos = p;
        cursor = c;
        length = l;
        head = 0;
    }
}
