package io.rdmacomm.kvstore;

import java.nio.ByteBuffer;

/**
 * Variable-size blocks of one memory pool, in the manner of TLSF (two-level segregated fit): free blocks sit in
 * lists by size class (a power of two split into 16 linear steps), found through two levels of bitmaps in O(1),
 * and a freed block merges at once with free neighbours, so free space never stays cut into pieces that a later
 * allocation could have used whole. A good fit rounds the request up to the next class, whose every block fits;
 * when that finds nothing, the request's own class is searched first-fit, so "full" means no block fits.
 *
 * <p>The bookkeeping lives in the pool itself (no objects per block): a 16-byte header before each block's
 * payload holds its size and free flag, the size of the block physically before it (to merge backwards), and,
 * while free, the links of its free list. A used 16-byte sentinel ends the pool, so merging forwards needs no
 * bounds check. Payloads are 16-byte aligned. Thread-safe: every method is synchronized (each is a few dozen
 * instructions; callers move data outside the lock).
 */
final class Allocator {
    static final int HEADER = 16;
    static final int ALIGN = 16;
    private static final int MIN_BLOCK = 2 * ALIGN;
    private static final int FREE = 1;
    private static final int SL_LOG2 = 4;
    private static final int SL_COUNT = 1 << SL_LOG2;
    private static final int FL_COUNT = 28;
    private static final int NONE = -1;
    // header fields, at the block's offset
    private static final int SIZE = 0;
    private static final int PREV_SIZE = 4;
    private static final int NEXT_FREE = 8;
    private static final int PREV_FREE = 12;

    private final ByteBuffer pool;
    private final int capacity;
    private final int[] heads = new int[FL_COUNT * SL_COUNT];
    private final int[] slBitmaps = new int[FL_COUNT];
    private int flBitmap;
    private long usedBytes;
    private long freeBytes;
    private int usedBlocks;

    /** Manages all of {@code pool} (its capacity, rounded down to 16 bytes); the pool's content is overwritten. */
    Allocator(ByteBuffer pool) {
        if (pool.capacity() < MIN_BLOCK + ALIGN) {
            throw new IllegalArgumentException("a pool needs at least " + (MIN_BLOCK + ALIGN) + " bytes, got "
                    + pool.capacity());
        }
        this.pool = pool.duplicate().clear();
        this.capacity = pool.capacity() & -ALIGN;
        java.util.Arrays.fill(heads, NONE);
        int sentinel = capacity - ALIGN;
        setSize(sentinel, ALIGN, false);
        this.pool.putInt(sentinel + PREV_SIZE, sentinel);
        setSize(0, sentinel, true);
        this.pool.putInt(PREV_SIZE, 0);
        insert(0, sentinel);
        freeBytes = sentinel;
    }

    /** The largest payload the pool could ever hold. */
    int maxPayload() {
        return capacity - ALIGN - HEADER;
    }

    /**
     * Allocates a block for {@code bytes} of payload and returns the payload's offset in the pool, or -1 when no
     * free block is large enough.
     */
    synchronized int allocate(int bytes) {
        if (bytes < 0 || bytes > maxPayload()) {
            return NONE;
        }
        int size = Math.max(MIN_BLOCK, (bytes + HEADER + ALIGN - 1) & -ALIGN);
        int block = goodFit(size);
        if (block == NONE) {
            block = firstFitInOwnClass(size);
            if (block == NONE) {
                return NONE;
            }
        }
        int have = sizeOf(block);
        remove(block, have);
        freeBytes -= have;
        if (have - size >= MIN_BLOCK) {
            int rest = block + size;
            setSize(rest, have - size, true);
            pool.putInt(rest + PREV_SIZE, size);
            pool.putInt(rest + have - size + PREV_SIZE, have - size);
            insert(rest, have - size);
            freeBytes += have - size;
            have = size;
        }
        setSize(block, have, false);
        usedBytes += have;
        usedBlocks++;
        return block + HEADER;
    }

    /** Frees the block whose payload starts at {@code payload} (an offset {@link #allocate} returned). */
    synchronized void free(int payload) {
        int block = payload - HEADER;
        if (block < 0 || block >= capacity - ALIGN || (block & (ALIGN - 1)) != 0 || isFree(block)
                || sizeOf(block) < MIN_BLOCK) {
            throw new IllegalStateException("free of offset " + payload + ", which is not an allocated block");
        }
        int size = sizeOf(block);
        usedBytes -= size;
        usedBlocks--;
        freeBytes += size;
        int next = block + size;
        if (isFree(next)) {
            int nextSize = sizeOf(next);
            remove(next, nextSize);
            size += nextSize;
        }
        if (block > 0) {
            int prev = block - pool.getInt(block + PREV_SIZE);
            if (isFree(prev)) {
                int prevSize = sizeOf(prev);
                remove(prev, prevSize);
                block = prev;
                size += prevSize;
            }
        }
        setSize(block, size, true);
        pool.putInt(block + size + PREV_SIZE, size);
        insert(block, size);
    }

    /** Bytes in allocated blocks, headers included. */
    synchronized long usedBytes() {
        return usedBytes;
    }

    /** Bytes in free blocks, headers included. */
    synchronized long freeBytes() {
        return freeBytes;
    }

    synchronized int usedBlocks() {
        return usedBlocks;
    }

    /** The largest payload one allocation could get now. */
    synchronized long largestFreePayload() {
        if (flBitmap == 0) {
            return 0;
        }
        int fl = 31 - Integer.numberOfLeadingZeros(flBitmap);
        int sl = 31 - Integer.numberOfLeadingZeros(slBitmaps[fl]);
        int largest = 0;
        for (int b = heads[fl * SL_COUNT + sl]; b != NONE; b = pool.getInt(b + NEXT_FREE)) {
            largest = Math.max(largest, sizeOf(b));
        }
        return largest - HEADER;
    }

    /** The pool's bytes: used + free + the 16-byte sentinel. */
    long capacity() {
        return capacity;
    }

    // ---- size classes -------------------------------------------------------------------------------------

    /** The class index (fl * SL_COUNT + sl) holding blocks of {@code size} bytes (rounded down). */
    private static int classOf(int size) {
        int units = size >>> 4;
        if (units < SL_COUNT) {
            return units;
        }
        int msb = 31 - Integer.numberOfLeadingZeros(units);
        int fl = msb - SL_LOG2 + 1;
        int sl = (units >>> (msb - SL_LOG2)) & (SL_COUNT - 1);
        return fl * SL_COUNT + sl;
    }

    /** A free block from the first class whose every block holds {@code size} bytes, or NONE. */
    private int goodFit(int size) {
        int units = size >>> 4;
        if (units >= SL_COUNT) {
            int msb = 31 - Integer.numberOfLeadingZeros(units);
            units += (1 << (msb - SL_LOG2)) - 1;
        }
        long roundedSize = (long) units << 4;
        if (roundedSize > Integer.MAX_VALUE) {
            return NONE;
        }
        int c = classOf((int) roundedSize);
        int fl = c / SL_COUNT;
        int sl = c % SL_COUNT;
        if (fl >= FL_COUNT) {
            return NONE;
        }
        int slMap = slBitmaps[fl] & (-1 << sl);
        if (slMap == 0) {
            int flMap = flBitmap & (fl + 1 >= 32 ? 0 : -1 << (fl + 1));
            if (flMap == 0) {
                return NONE;
            }
            fl = Integer.numberOfTrailingZeros(flMap);
            slMap = slBitmaps[fl];
        }
        return heads[fl * SL_COUNT + Integer.numberOfTrailingZeros(slMap)];
    }

    private int firstFitInOwnClass(int size) {
        for (int b = heads[classOf(size)]; b != NONE; b = pool.getInt(b + NEXT_FREE)) {
            if (sizeOf(b) >= size) {
                return b;
            }
        }
        return NONE;
    }

    // ---- free lists ---------------------------------------------------------------------------------------

    private void insert(int block, int size) {
        int c = classOf(size);
        int head = heads[c];
        pool.putInt(block + NEXT_FREE, head);
        pool.putInt(block + PREV_FREE, NONE);
        if (head != NONE) {
            pool.putInt(head + PREV_FREE, block);
        }
        heads[c] = block;
        slBitmaps[c / SL_COUNT] |= 1 << (c % SL_COUNT);
        flBitmap |= 1 << (c / SL_COUNT);
    }

    private void remove(int block, int size) {
        int c = classOf(size);
        int next = pool.getInt(block + NEXT_FREE);
        int prev = pool.getInt(block + PREV_FREE);
        if (prev != NONE) {
            pool.putInt(prev + NEXT_FREE, next);
        } else {
            heads[c] = next;
        }
        if (next != NONE) {
            pool.putInt(next + PREV_FREE, prev);
        }
        if (heads[c] == NONE) {
            int fl = c / SL_COUNT;
            slBitmaps[fl] &= ~(1 << (c % SL_COUNT));
            if (slBitmaps[fl] == 0) {
                flBitmap &= ~(1 << fl);
            }
        }
    }

    private int sizeOf(int block) {
        return pool.getInt(block + SIZE) & ~FREE;
    }

    private boolean isFree(int block) {
        return (pool.getInt(block + SIZE) & FREE) != 0;
    }

    private void setSize(int block, int size, boolean free) {
        pool.putInt(block + SIZE, size | (free ? FREE : 0));
    }
}
