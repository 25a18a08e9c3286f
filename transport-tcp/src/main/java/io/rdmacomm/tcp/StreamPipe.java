package io.rdmacomm.tcp;

import io.rdmacomm.api.support.Waiter;
import java.io.IOException;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.channels.AsynchronousCloseException;
import java.util.function.BooleanSupplier;

/**
 * A bounded ring of stream bytes from the progress thread (which owns the socket once remote memory is in use)
 * to the application's {@code read}: one writer and one reader, no lock; each side publishes how far it got and
 * wakes the other. A full ring stops the progress thread, so backpressure reaches the peer through TCP and nothing
 * is dropped. Whatever the reader could now take without waiting (bytes, the end, a failure, the close) also runs
 * the connection's {@code onReadable}, which tells a listener armed by {@code notifyReadable} if there is one.
 */
final class StreamPipe {
    private final ByteBuffer ring;
    private final int capacity;
    private final String peer;
    private final Waiter waiter;
    /** Bytes ever written; advanced only by the writer. */
    private volatile long tail;
    /** Bytes ever read; advanced only by the reader. */
    private volatile long head;
    private volatile boolean finished;
    private volatile IOException failure;
    private volatile boolean closed;
    private final BooleanSupplier hasRoom;
    private final BooleanSupplier readable;
    /** Run after each change the reader could act on; must not block (one volatile read when nobody listens). */
    private final Runnable onReadable;

    /**
     * @param spinNanos how long a side spins before it parks (the connection's busy polling)
     * @param onReadable runs (on the writer's thread, or the closer's) whenever the reader could act without waiting
     */
    StreamPipe(int capacity, long spinNanos, String peer, Runnable onReadable) {
        this.onReadable = onReadable;
        this.ring = ByteBuffer.allocateDirect(capacity);
        this.capacity = capacity;
        this.peer = peer;
        this.waiter = new Waiter(spinNanos, null, () -> closed, () -> "from " + peer);
        this.hasRoom = () -> tail - head < capacity;
        this.readable = () -> tail != head || finished || failure != null;
    }

    /**
     * Moves at least one and at most {@code max} bytes from {@code src} into the ring, waiting for room.
     *
     * @throws AsynchronousCloseException if the pipe is closed while waiting
     */
    int write(ByteBuffer src, int max) throws IOException {
        waiter.await(hasRoom, Waiter.NO_DEADLINE, "room in the stream pipe");
        if (closed) {
            throw new AsynchronousCloseException();
        }
        long t = tail;
        int n = Math.min(Math.min(max, src.remaining()), capacity - (int) (t - head));
        int at = (int) (t % capacity);
        int first = Math.min(n, capacity - at);
        ring.put(at, src, src.position(), first);
        ring.put(0, src, src.position() + first, n - first);
        src.position(src.position() + n);
        tail = t + n;
        waiter.wake();
        onReadable.run();
        return n;
    }

    /**
     * Moves at least one byte into {@code dst} (which has space), waiting up to {@code timeoutNanos} (0 =
     * forever); returns -1 once the stream has finished and the ring is empty.
     */
    int read(ByteBuffer dst, long timeoutNanos) throws IOException {
        try {
            waiter.awaitFor(readable, Waiter.UNTIMED, timeoutNanos, "read");
        } catch (SocketTimeoutException e) {
            throw new SocketTimeoutException("read from " + peer + " timed out after "
                    + Settings.format(timeoutNanos) + " (readTimeout)");
        }
        if (closed) {
            throw new AsynchronousCloseException();
        }
        long h = head;
        int size = (int) (tail - h);
        if (size == 0) {
            IOException f = failure;
            if (f != null) {
                throw f;
            }
            return -1;
        }
        int n = Math.min(dst.remaining(), size);
        int at = (int) (h % capacity);
        int first = Math.min(n, capacity - at);
        dst.put(dst.position(), ring, at, first);
        dst.put(dst.position() + first, ring, 0, n - first);
        dst.position(dst.position() + n);
        head = h + n;
        waiter.wake();
        return n;
    }

    /**
     * Bytes {@link #read} returns without waiting, -1 once the stream finished and every byte was read, 0 if none
     * yet; throws the failure once every byte was read. Called by the reader.
     */
    int available() throws IOException {
        if (closed) {
            throw new AsynchronousCloseException();
        }
        long size = tail - head;
        if (size > 0) {
            return (int) Math.min(size, Integer.MAX_VALUE);
        }
        IOException f = failure;
        if (f != null) {
            throw f;
        }
        return finished ? -1 : 0;
    }

    /** Whether {@link #read} would return or throw without waiting. */
    boolean readable() {
        return readable.getAsBoolean() || closed;
    }

    /** The peer ended the stream: the reader gets the remaining bytes, then -1. */
    void finish() {
        finished = true;
        waiter.wake();
        onReadable.run();
    }

    /** The connection failed: the reader gets the remaining bytes, then {@code e}. */
    void fail(IOException e) {
        failure = e;
        waiter.wake();
        onReadable.run();
    }

    /** Releases both sides with {@link AsynchronousCloseException}. */
    void close() {
        closed = true;
        waiter.wake();
        onReadable.run();
    }
}
