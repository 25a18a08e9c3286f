package io.rdmacomm.local;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.channels.AsynchronousCloseException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * One direction of a local connection: a bounded ring of bytes. A full ring blocks the writer, so nothing is
 * dropped and a slow reader slows the writer down, as a socket's buffers would.
 */
final class Pipe {
    private final byte[] ring;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition notEmpty = lock.newCondition();
    private final Condition notFull = lock.newCondition();
    private int head;
    private int count;
    /** The writing side closed: the reader drains what is left, then sees end of stream. */
    private boolean writerClosed;
    /** The reading side closed: buffered bytes are discarded and writes fail. */
    private boolean readerClosed;
    /** The reading side closed with bytes it never read: they can no longer be delivered. */
    private boolean lostOnClose;
    /** Whom to tell once when a read would not wait; guarded by the lock. */
    private Runnable readinessListener;

    Pipe(int capacity) {
        this.ring = new byte[capacity];
    }

    /**
     * Moves at least one byte into {@code dst}, or returns -1 at end of stream.
     *
     * @param timeoutNanos 0 waits until a byte arrives or either side closes
     * @param what names the operation and endpoint for exception messages
     */
    int read(ByteBuffer dst, long timeoutNanos, String what) throws IOException {
        if (!dst.hasRemaining()) {
            return 0;
        }
        lock.lock();
        try {
            long left = timeoutNanos;
            while (count == 0 && !writerClosed && !readerClosed) {
                if (timeoutNanos != 0 && left <= 0) {
                    throw new SocketTimeoutException(what + ": no byte arrived within "
                            + TimeUnit.NANOSECONDS.toMillis(timeoutNanos) + " ms (readTimeout)");
                }
                left = await(notEmpty, timeoutNanos == 0, left);
            }
            if (readerClosed) {
                throw new AsynchronousCloseException();
            }
            if (count == 0) {
                return -1;
            }
            int n = Math.min(count, dst.remaining());
            int first = Math.min(n, ring.length - head);
            dst.put(ring, head, first);
            dst.put(ring, 0, n - first);
            head = (head + n) % ring.length;
            count -= n;
            notFull.signalAll();
            return n;
        } finally {
            lock.unlock();
        }
    }

    /** Bytes a read returns without waiting, -1 at the end of the stream, 0 if none yet. */
    int available() throws IOException {
        lock.lock();
        try {
            if (readerClosed) {
                throw new java.nio.channels.ClosedChannelException();
            }
            return count > 0 ? count : writerClosed ? -1 : 0;
        } finally {
            lock.unlock();
        }
    }

    /** Runs {@code listener} once a read would not wait: at once, on this thread, if it would not now. */
    void notifyReadable(Runnable listener) {
        lock.lock();
        try {
            if (count == 0 && !writerClosed && !readerClosed) {
                readinessListener = listener;
                return;
            }
        } finally {
            lock.unlock();
        }
        listener.run();
    }

    /** Takes the listener if a read would not wait now; the caller runs it outside the lock. */
    private Runnable takeListener() {
        Runnable r = readinessListener;
        readinessListener = null;
        return r;
    }

    private static void tell(Runnable r) {
        if (r != null) {
            r.run();
        }
    }

    /**
     * Moves all of {@code src} into the ring, blocking while it is full; a reader's listener is told after each
     * chunk, before the writer waits for room again.
     */
    void write(ByteBuffer src, long timeoutNanos, String what) throws IOException {
        while (src.hasRemaining()) {
            Runnable told;
            lock.lock();
            try {
                long left = timeoutNanos;
                while (count == ring.length && !readerClosed && !writerClosed) {
                    if (timeoutNanos != 0 && left <= 0) {
                        throw new SocketTimeoutException(what + ": the peer consumed nothing within "
                                + TimeUnit.NANOSECONDS.toMillis(timeoutNanos) + " ms (readTimeout)");
                    }
                    left = await(notFull, timeoutNanos == 0, left);
                }
                if (writerClosed) {
                    throw new AsynchronousCloseException();
                }
                if (readerClosed) {
                    throw new IOException(what + ": connection closed by the peer");
                }
                int tail = (head + count) % ring.length;
                int n = Math.min(ring.length - count, src.remaining());
                int first = Math.min(n, ring.length - tail);
                src.get(ring, tail, first);
                src.get(ring, 0, n - first);
                count += n;
                notEmpty.signalAll();
                told = takeListener();
            } finally {
                lock.unlock();
            }
            tell(told);
        }
    }

    void closeWriter() {
        Runnable told;
        lock.lock();
        try {
            told = takeListener();
            writerClosed = true;
            notEmpty.signalAll();
            notFull.signalAll();
        } finally {
            lock.unlock();
        }
        tell(told);
    }

    void closeReader() {
        Runnable told;
        lock.lock();
        try {
            told = takeListener();
            readerClosed = true;
            lostOnClose |= count > 0;
            count = 0;
            notEmpty.signalAll();
            notFull.signalAll();
        } finally {
            lock.unlock();
        }
        tell(told);
    }

    /** Whether the reading side has closed (writes would fail). */
    /** Whether the reader closed before it had read every byte written so far. */
    boolean undeliverable() {
        lock.lock();
        try {
            return lostOnClose;
        } finally {
            lock.unlock();
        }
    }

    static long await(Condition c, boolean forever, long nanos) throws InterruptedIOException {
        try {
            if (forever) {
                c.await();
                return nanos;
            }
            return c.awaitNanos(nanos);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("interrupted while waiting");
        }
    }
}
