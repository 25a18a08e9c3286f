package io.rdmacomm.rdma;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * The control words of a receive ring that its writer maps (shared memory on one host): the writer publishes how
 * far it has written the ring, and the reader how far it has consumed it and whether it is busy-polling. A writer whose reader polls
 * sends no DATA message: the reader takes the bytes from the published end. Both sides store and load these words
 * with volatile semantics, so of "writer publishes, then looks at the flag" and "reader clears the flag, then
 * looks at the end" at least one sees the other: a reader that stops polling either finds the bytes or gets DATA.
 * The words are the peer's to scribble on; the reader checks every end it takes against the ring and its credit.
 */
final class SharedNotify {
    private static final VarHandle LONGS = MethodHandles.byteBufferViewVarHandle(long[].class, ByteOrder.nativeOrder());
    /** Ring bytes written (the absolute ring cursor after the last published chunk); the writer's. */
    private static final int RING_END = 0;
    /** 1 while the reader busy-polls the ring end, on a cache line of its own; the reader's. */
    private static final int POLLING = 64;
    /**
     * Ring bytes the reader consumed, on a cache line of its own; the reader's. A writer waiting for ring space reads
     * it as a credit that needs no message (CREDIT messages still go every half ring, for a writer that parked and for
     * peers that do not read this word); it takes a value only if it is ahead of the credit it has and not beyond what
     * it wrote.
     */
    private static final int CONSUMED = 128;
    /** The control area's size with every word; one of {@link #MIN_LENGTH} has no consumed word (the writer asks). */
    static final int LENGTH = 192;
    static final int MIN_LENGTH = 128;

    private final ByteBuffer control;
    private final boolean hasConsumed;

    SharedNotify(ByteBuffer control) {
        if (control.capacity() < MIN_LENGTH) {
            throw new IllegalArgumentException("ring control area of " + control.capacity() + " bytes, "
                    + MIN_LENGTH + " needed");
        }
        this.control = control;
        this.hasConsumed = control.capacity() >= LENGTH;
    }

    /** Writer: publishes {@code ringEnd}; true if the reader is polling, so no DATA is needed. */
    boolean publish(long ringEnd) {
        LONGS.setVolatile(control, RING_END, ringEnd);
        return (long) LONGS.getVolatile(control, POLLING) != 0;
    }

    /** Reader: the published ring end. */
    long ringEnd() {
        return (long) LONGS.getVolatile(control, RING_END);
    }

    /** Reader: it consumed {@code ringConsumed} ring bytes (stored after the bytes were copied out). */
    void consumed(long ringConsumed) {
        if (hasConsumed) {
            LONGS.setRelease(control, CONSUMED, ringConsumed);
        }
    }

    /** Writer: the ring bytes the reader says it consumed (the peer's word: check it). */
    long consumed() {
        return hasConsumed ? (long) LONGS.getAcquire(control, CONSUMED) : 0;
    }

    /** Reader: whether it busy-polls the ring end from now on. */
    void polling(boolean polling) {
        LONGS.setVolatile(control, POLLING, polling ? 1L : 0L);
    }
}
