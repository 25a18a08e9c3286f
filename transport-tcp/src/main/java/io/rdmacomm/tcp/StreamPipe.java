package io.rdmacomm.tcp;

import java.io.IOException;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.channels.AsynchronousCloseException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A bounded ring of stream bytes from the progress thread (which owns the socket once remote memory is in use)
 * to the application's {@code read}. A full ring stops the progress thread, so backpressure reaches the peer
 * through TCP and nothing is dropped.
 */
final class StreamPipe {
    private final ByteBuffer ring;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition notEmpty = lock.newCondition();
    private final Condition notFull = lock.newCondition();
    private int head;
    private int size;
    private boolean finished;
    private boolean closed;
    private IOException failure;

    StreamPipe(int capacity) {
        ring = ByteBuffer.allocateDirect(capacity);
    }

    /**
     * Moves at least one and at most {@code max} bytes from {@code src} into the ring, waiting for space.
     *
     * @throws AsynchronousCloseException if the pipe is closed while waiting
     */
    int write(ByteBuffer src, int max) throws IOException {
        lock.lock();
        try {
            while (size == ring.capacity() && !closed) {
                notFull.awaitUninterruptibly();
            }
            if (closed) {
                throw new AsynchronousCloseException();
            }
            int n = Math.min(Math.min(max, src.remaining()), ring.capacity() - size);
            int tail = (head + size) % ring.capacity();
            int first = Math.min(n, ring.capacity() - tail);
            ring.put(tail, src, src.position(), first);
            ring.put(0, src, src.position() + first, n - first);
            src.position(src.position() + n);
            size += n;
            notEmpty.signal();
            return n;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Moves at least one byte into {@code dst} (which has space), waiting up to {@code timeoutNanos} (0 =
     * forever); returns -1 once the stream has finished and the ring is empty.
     */
    int read(ByteBuffer dst, long timeoutNanos, String peer) throws IOException {
        lock.lock();
        try {
            long left = timeoutNanos;
            while (size == 0 && !finished && failure == null && !closed) {
                if (timeoutNanos == 0) {
                    notEmpty.await();
                } else if (left <= 0) {
                    throw new SocketTimeoutException("read from " + peer + " timed out after "
                            + Settings.format(timeoutNanos) + " (readTimeout)");
                } else {
                    left = notEmpty.awaitNanos(left);
                }
            }
            if (closed) {
                throw new AsynchronousCloseException();
            }
            if (size == 0) {
                if (failure != null) {
                    throw failure;
                }
                return -1;
            }
            int n = Math.min(dst.remaining(), size);
            int first = Math.min(n, ring.capacity() - head);
            dst.put(dst.position(), ring, head, first);
            dst.put(dst.position() + first, ring, 0, n - first);
            dst.position(dst.position() + n);
            head = (head + n) % ring.capacity();
            size -= n;
            notFull.signal();
            return n;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new java.io.InterruptedIOException("read from " + peer + " interrupted");
        } finally {
            lock.unlock();
        }
    }

    /** The peer ended the stream: readers get the remaining bytes, then -1. */
    void finish() {
        lock.lock();
        try {
            finished = true;
            notEmpty.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /** The connection failed: readers get the remaining bytes, then {@code e}. */
    void fail(IOException e) {
        lock.lock();
        try {
            failure = e;
            notEmpty.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /** Releases every waiter with {@link AsynchronousCloseException}. */
    void close() {
        lock.lock();
        try {
            closed = true;
            notEmpty.signalAll();
            notFull.signalAll();
        } finally {
            lock.unlock();
        }
    }
}
