package io.rdmacomm.tcp;

import java.nio.ByteBuffer;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Direct buffers of one capacity, shared by the connections of the process: a connection borrows one for a burst of
 * frames larger than its small resident buffer and gives it back once it is drained, so an idle connection holds no
 * large buffer. At most a few MiB of each capacity wait here; a buffer given back beyond that is left to the
 * garbage collector. Taking and giving back allocate nothing once the pool of a capacity exists.
 */
final class BufferPool {
    /** The most bytes of one capacity kept idle. */
    private static final long MAX_IDLE_BYTES = 4L << 20;
    private static final ConcurrentHashMap<Integer, BufferPool> POOLS = new ConcurrentHashMap<>();

    private final int capacity;
    /** Guarded by {@code this}: a stack of {@code count} idle buffers. */
    private final ByteBuffer[] idle;
    private int count;

    private BufferPool(int capacity) {
        this.capacity = capacity;
        this.idle = new ByteBuffer[(int) Math.max(2, Math.min(64, MAX_IDLE_BYTES / capacity))];
    }

    /** The pool of buffers of {@code capacity} bytes. */
    static BufferPool of(int capacity) {
        return POOLS.computeIfAbsent(capacity, BufferPool::new);
    }

    int capacity() {
        return capacity;
    }

    /** A cleared buffer of {@link #capacity} bytes, idle in the pool or new. */
    ByteBuffer take() {
        synchronized (this) {
            if (count > 0) {
                ByteBuffer b = idle[--count];
                idle[count] = null;
                return b.clear();
            }
        }
        return ByteBuffer.allocateDirect(capacity);
    }

    /** Gives back a buffer {@link #take} returned; the caller must not touch it afterwards. */
    void give(ByteBuffer b) {
        synchronized (this) {
            if (count < idle.length) {
                idle[count++] = b;
            }
        }
    }

    /** Buffers idle in the pool now, for tests. */
    synchronized int idleCount() {
        return count;
    }
}
