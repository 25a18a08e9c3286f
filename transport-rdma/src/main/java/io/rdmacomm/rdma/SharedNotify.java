package io.rdmacomm.rdma;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * The control words of a receive ring that its writer maps (shared memory on one host): the writer publishes how
 * far it has written the ring, and the reader says whether it is busy-polling them. A writer whose reader polls
 * sends no DATA message: the reader takes the bytes from the published end. Both sides store and load these words
 * with volatile semantics, so of "writer publishes, then looks at the flag" and "reader clears the flag, then
 * looks at the end" at least one sees the other: a reader that stops polling either finds the bytes or gets DATA.
 * The words are the peer's to scribble on; the reader checks every end it takes against the ring and its credit.
 *
 * <p>A small chunk (up to {@link #INLINE_MAX} bytes) is also copied into the rest of the published end's cache line,
 * with its bounds, before the end is published: a polling reader then takes the bytes from the line it already had
 * to fetch to see the new end, not from a second line of the ring, and the ring's line stays with the writer, who
 * writes it again next. The copy is a seqlock: the writer clears the bounds before it changes the bytes, and the
 * reader keeps what it copied only if the bounds it started from are still there after the copy; otherwise it reads
 * the ring, which holds the same bytes until the reader's credit lets the writer reuse them.
 */
final class SharedNotify {
    private static final VarHandle LONGS = MethodHandles.byteBufferViewVarHandle(long[].class, ByteOrder.nativeOrder());
    /** Ring bytes written (the absolute ring cursor after the last published chunk); the writer's. */
    private static final int RING_END = 0;
    /** Where the inline chunk starts (an absolute ring cursor), or {@link #NO_INLINE}; the writer's. */
    private static final int INLINE_FROM = 8;
    /** Where the inline chunk ends; the writer's. */
    private static final int INLINE_END = 16;
    /** The inline chunk's bytes: the rest of the published end's cache line. */
    private static final int INLINE_DATA = 24;
    /** The largest chunk copied into the end's line. */
    static final int INLINE_MAX = 64 - INLINE_DATA;
    private static final long NO_INLINE = -1;
    /** 1 while the reader busy-polls the ring end, on a cache line of its own; the reader's. */
    private static final int POLLING = 64;
    static final int LENGTH = 128;

    private final ByteBuffer control;

    SharedNotify(ByteBuffer control) {
        if (control.capacity() < LENGTH) {
            throw new IllegalArgumentException("ring control area of " + control.capacity() + " bytes, "
                    + LENGTH + " needed");
        }
        this.control = control;
    }

    /**
     * Writer: publishes {@code ringEnd}, the end of the chunk of {@code n} bytes it wrote into the ring, which are at
     * {@code ring[off, off + n)} (copied into the end's line too if they fit); true if the reader is polling, so no
     * DATA is needed.
     */
    boolean publish(long ringEnd, ByteBuffer ring, int off, int n) {
        if (n <= INLINE_MAX) {
            LONGS.setOpaque(control, INLINE_FROM, NO_INLINE);
            VarHandle.storeStoreFence(); // a reader that sees a byte of this chunk sees the bounds cleared
            control.put(INLINE_DATA, ring, off, n);
            LONGS.setOpaque(control, INLINE_END, ringEnd);
            LONGS.setRelease(control, INLINE_FROM, ringEnd - n);
        }
        LONGS.setVolatile(control, RING_END, ringEnd);
        return (long) LONGS.getVolatile(control, POLLING) != 0;
    }

    /** Reader: the published ring end. */
    long ringEnd() {
        return (long) LONGS.getVolatile(control, RING_END);
    }

    /**
     * Reader: copies the chunk {@code [from, end)} from the end's line into {@code into}, if the writer put exactly
     * that chunk there and did not change it during the copy; false if not (the bytes are in the ring).
     */
    boolean takeInline(long from, long end, byte[] into) {
        long n = end - from;
        if (n <= 0 || n > INLINE_MAX || (long) LONGS.getAcquire(control, INLINE_FROM) != from
                || (long) LONGS.getOpaque(control, INLINE_END) != end) {
            return false;
        }
        control.get(INLINE_DATA, into, 0, (int) n);
        VarHandle.loadLoadFence(); // the copy before the second look at the bounds
        return (long) LONGS.getVolatile(control, INLINE_FROM) == from;
    }

    /** Reader: whether it busy-polls the ring end from now on. */
    void polling(boolean polling) {
        LONGS.setVolatile(control, POLLING, polling ? 1L : 0L);
    }
}
