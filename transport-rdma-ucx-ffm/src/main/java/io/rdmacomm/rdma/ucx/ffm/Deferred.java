package io.rdmacomm.rdma.ucx.ffm;

import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.function.Consumer;

/**
 * Messages of one channel that arrived while the receiving thread was inside an operation of its own: a connection
 * between two channels of this process is an endpoint to the node's own worker, whose {@code self} transport runs
 * the receiver's handler inside the sender's {@code ucp_am_send_nbx}, where the engine may hold its locks. Such a
 * message is copied here and handed over by the next thread that polls the node (in order: once one message is
 * deferred, later ones queue behind it until the backlog is drained). Buffers are reused.
 */
final class Deferred {
    private final ArrayDeque<ByteBuffer> queue = new ArrayDeque<>();
    private final ArrayDeque<ByteBuffer> free = new ArrayDeque<>();
    private boolean draining;

    /** Whether {@code message} must queue (the thread is inside an operation, or earlier ones are queued). */
    synchronized boolean offerIfBacklogged(ByteBuffer message, boolean insideOperation) {
        if (!insideOperation && !draining && queue.isEmpty()) {
            return false;
        }
        ByteBuffer copy = free.poll();
        if (copy == null || copy.capacity() < message.remaining()) {
            copy = ByteBuffer.allocate(Math.max(FfmChannel.MAX_MESSAGE, message.remaining()));
        }
        int n = message.remaining();
        copy.clear().put(0, message, message.position(), n).limit(n);
        queue.add(copy);
        return true;
    }

    synchronized boolean isEmpty() {
        return queue.isEmpty();
    }

    /** Delivers the backlog in order on the calling thread (one drainer at a time). */
    void drain(Consumer<ByteBuffer> deliver) {
        synchronized (this) {
            if (draining) {
                return;
            }
            draining = true;
        }
        ByteBuffer m = null;
        try {
            while (true) {
                synchronized (this) {
                    if (m != null) {
                        free.add(m);
                    }
                    m = queue.poll();
                    if (m == null) {
                        return;
                    }
                }
                deliver.accept(m);
            }
        } finally {
            synchronized (this) {
                draining = false;
            }
        }
    }
}
