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
 */
final class SharedNotify {
    private static final VarHandle LONGS = MethodHandles.byteBufferViewVarHandle(long[].class, ByteOrder.nativeOrder());
    /** Ring bytes written (the absolute ring cursor after the last published chunk); the writer's. */
    private static final int RING_END = 0;
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

    /** Writer: publishes {@code ringEnd}; true if the reader is polling, so no DATA is needed. */
    boolean publish(long ringEnd) {
        LONGS.setVolatile(control, RING_END, ringEnd);
        return (long) LONGS.getVolatile(control, POLLING) != 0;
    }

    /** Reader: the published ring end. */
    long ringEnd() {
        return (long) LONGS.getVolatile(control, RING_END);
    }

    /** Reader: whether it busy-polls the ring end from now on. */
    void polling(boolean polling) {
        LONGS.setVolatile(control, POLLING, polling ? 1L : 0L);
    }
}
