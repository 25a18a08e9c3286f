package io.rdmacomm.tcp;

import io.rdmacomm.api.CommunicatorException;
import java.io.EOFException;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.channels.AsynchronousCloseException;
import java.nio.channels.CancelledKeyException;
import java.nio.channels.ClosedByInterruptException;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A connection's socket and how threads wait on it, below the framing; the socket is the only descriptor a
 * connection holds. With neither a read timeout nor busy polling the channel starts in blocking mode, the cheapest
 * wait (liveness needs no other: see {@link Settings#blockingChannel}); otherwise it is non-blocking, and a thread
 * that must wait for input or for room parks until the process's {@link Readiness} thread, whose one selector all
 * non-blocking channels join on their first wait, tells it the channel is ready (or its timeout passes, or the close
 * wakes it). A blocking channel turns non-blocking for good when its reader first asks what it could read without
 * waiting ({@link #makeNonBlocking}). What happens to the stream at close is {@link StreamEnd}'s.
 */
final class SocketIo implements Readiness.Ready {
    private final SocketChannel channel;
    /** The connection's TLS, or null for plain TCP. */
    private final TlsSession tls;
    private final Settings settings;
    private final SocketAddress remote;
    /** {@link #remote} as text, once asked for. */
    private String peer;
    /** Changes once at most, from true to false ({@link #makeNonBlocking}), under the read lock. */
    private volatile boolean blocking;
    /** The channel's key on the {@link Readiness} selector once it joined (its first wait), else null. */
    private volatile SelectionKey key;
    /** The thread parked until the channel is readable, or writable; null when none waits. */
    private volatile Thread readWaiter;
    private volatile Thread writeWaiter;
    /** Told on the readiness thread whenever the channel turns readable, once {@link #armReadable} set it. */
    private volatile Runnable onReadable;
    /** Told on the readiness thread whenever the channel turns writable, once {@link #armWritable} set it. */
    private volatile Runnable onWritable;
    /**
     * Set just before the channel closes: waits end with AsynchronousCloseException, and failures of channel calls
     * are reported as such.
     */
    private volatile boolean closed;
    /** Bytes the channel took so far (with TLS: plaintext sealed), for the liveness thread; one writer at a time. */
    private volatile long sent;

    private SocketIo(SocketChannel channel, TlsSession tls, Settings settings, SocketAddress remote,
            boolean blocking) {
        this.channel = channel;
        this.tls = tls;
        this.settings = settings;
        this.remote = remote;
        this.blocking = blocking;
    }

    /**
     * Takes over a handshaken channel (blocking or not, registered nowhere) with its TLS session, or null for plain
     * TCP; closes it on failure.
     */
    static SocketIo open(SocketChannel channel, TlsSession tls, Settings settings) throws IOException {
        try {
            SocketAddress remote = channel.getRemoteAddress();
            boolean blocking = settings.blockingChannel();
            channel.configureBlocking(blocking);
            return new SocketIo(channel, tls, settings, remote, blocking);
        } catch (IOException | RuntimeException e) {
            TcpServer.closeQuietly(channel);
            throw e;
        }
    }

    static String describe(SocketAddress address) {
        if (address instanceof InetSocketAddress a && a.getAddress() != null) {
            String host = a.getAddress().getHostAddress();
            return (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + a.getPort();
        }
        return String.valueOf(address);
    }

    /** The peer's address, as messages name it; formatted on first use (most connections never need it). */
    String peer() {
        String p = peer;
        if (p == null) {
            p = describe(remote);
            peer = p; // racing callers format the same string
        }
        return p;
    }

    boolean blocking() {
        return blocking;
    }

    SocketChannel channel() {
        return channel;
    }

    /** The connection's TLS, or null for plain TCP. */
    TlsSession tls() {
        return tls;
    }

    Settings settings() {
        return settings;
    }

    boolean isClosed() {
        return closed;
    }

    /**
     * Turns a blocking channel non-blocking, for good; does nothing on a non-blocking channel. The caller holds the
     * read lock, so no read is on the channel; a blocking write in progress is waited for (the channel's own lock).
     */
    void makeNonBlocking() throws IOException {
        if (!blocking) {
            return;
        }
        synchronized (this) {
            if (!blocking) {
                return;
            }
            if (closed) {
                throw new AsynchronousCloseException();
            }
            channel.configureBlocking(false);
            blocking = false;
        }
    }

    /**
     * One channel read, without waiting: the bytes read into {@code b} (which has space), 0 if nothing (complete,
     * with TLS) is there, -1 at end of stream. The channel must be non-blocking.
     */
    int readNow(ByteBuffer b) throws IOException {
        return readChannel(b);
    }

    /**
     * Arms the (non-blocking) channel on the process's {@link Readiness} selector: {@code onReadable} runs on the
     * readiness thread once the channel is readable (and again whenever a wait for input ends). Called by the
     * reader.
     *
     * @throws CancelledKeyException if the channel was closed
     */
    void armReadable(Runnable onReadable) throws IOException {
        this.onReadable = onReadable;
        Readiness.arm(key(), SelectionKey.OP_READ);
    }

    /**
     * Arms the (non-blocking) channel for room on the process's {@link Readiness} selector: {@code onWritable} runs on
     * the readiness thread once the socket takes bytes again (and whenever a wait for room ends). Called by the
     * writer, for bytes it took without waiting and must send on without its caller.
     */
    void armWritable(Runnable onWritable) throws IOException {
        this.onWritable = onWritable;
        try {
            Readiness.arm(key(), SelectionKey.OP_WRITE);
        } catch (CancelledKeyException e) {
            throw new AsynchronousCloseException();
        }
    }

    /** The channel's key on the readiness selector; joins it on the first call. */
    private SelectionKey key() throws IOException {
        SelectionKey k = key;
        if (k != null) {
            return k;
        }
        synchronized (this) {
            k = key;
            if (k == null) {
                if (closed) {
                    throw new AsynchronousCloseException();
                }
                k = Readiness.join(channel, this);
                key = k;
                if (closed) {
                    k.selector().wakeup(); // a close that did not see the key: let the selector release it
                }
            }
            return k;
        }
    }

    /** On the readiness thread: wakes the threads waiting for what the channel is ready for. */
    @Override
    public void ready(int readyOps) {
        if ((readyOps & SelectionKey.OP_READ) != 0) {
            LockSupport.unpark(readWaiter);
            Runnable r = onReadable;
            if (r != null) {
                r.run();
            }
        }
        if ((readyOps & SelectionKey.OP_WRITE) != 0) {
            LockSupport.unpark(writeWaiter);
            Runnable w = onWritable;
            if (w != null) {
                w.run();
            }
        }
    }

    /**
     * One channel read of at least one byte into {@code b} (which has space), or -1 at end of stream; spins for
     * {@code busyPoll} first, then waits up to {@code timeout} (0: no limit).
     */
    int readSome(ByteBuffer b, long timeout) throws IOException {
        if (blocking) {
            return readChannel(b);
        }
        int n = readChannel(b);
        if (n != 0) {
            return n;
        }
        if (settings.busyPoll() > 0) {
            long spinEnd = System.nanoTime() + settings.busyPoll();
            do {
                Thread.onSpinWait();
                n = readChannel(b);
                if (n != 0) {
                    return n;
                }
            } while (System.nanoTime() - spinEnd < 0);
        }
        long deadline = System.nanoTime() + timeout;
        for (;;) {
            long left = 0;
            if (timeout > 0) {
                left = deadline - System.nanoTime();
                if (left <= 0) {
                    throw new SocketTimeoutException("read from " + peer() + " timed out after "
                            + Settings.format(timeout) + " (readTimeout)");
                }
            }
            await(SelectionKey.OP_READ, left);
            n = readChannel(b);
            if (n != 0) {
                return n;
            }
        }
    }

    private int readChannel(ByteBuffer b) throws IOException {
        return tls == null ? channel.read(b) : tls.read(channel, b);
    }

    /**
     * Sends all of {@code b}, waiting while the peer takes nothing: at most {@code readTimeout}, or until
     * {@code deadline} (nanoTime) when that is non-zero.
     */
    void writeFully(ByteBuffer b, long deadline) throws IOException {
        if (tls != null) {
            writeFully(new ByteBuffer[] {b}, deadline);
            return;
        }
        long stuckSince = 0;
        while (b.hasRemaining()) {
            int n = channel.write(b);
            sent += n;
            stuckSince = n == 0 ? awaitWritable(deadline, stuckSince) : 0;
        }
    }

    /** Sends all of the buffers, in order, in gathering writes; waits as {@link #writeFully(ByteBuffer, long)}. */
    void writeFully(ByteBuffer[] bs, long deadline) throws IOException {
        if (tls == null) {
            long stuckSince = 0;
            while (TlsSession.remaining(bs)) {
                long n = channel.write(bs);
                sent += n;
                stuckSince = n == 0 ? awaitWritable(deadline, stuckSince) : 0;
            }
            return;
        }
        tls.output().lock();
        try {
            long stuckSince = 0;
            while (!tlsSend(bs)) {
                stuckSince = awaitWritable(deadline, stuckSince); // a TLS record taken in part counts as none
            }
        } finally {
            tls.output().unlock();
        }
    }

    /**
     * Sends what the channel takes of {@code b} now, without waiting (the liveness thread's heartbeats); with TLS,
     * records sealed but not taken go out with the next write.
     */
    void writeNow(ByteBuffer b) throws IOException {
        if (tls == null) {
            sent += channel.write(b);
            return;
        }
        tls.output().lock();
        try {
            tlsSend(new ByteBuffer[] {b});
        } finally {
            tls.output().unlock();
        }
    }

    /**
     * One gathering write of what the (non-blocking, plain) channel takes of the buffers now, without waiting;
     * returns the bytes it took.
     */
    long writeNow(ByteBuffer[] bs, int offset, int length) throws IOException {
        long n = channel.write(bs, offset, length);
        sent += n;
        return n;
    }

    /** {@link TlsSession#send}, counting what it sealed. Under {@code tls.output()}. */
    private boolean tlsSend(ByteBuffer[] bs) throws IOException {
        long before = bytes(bs);
        try {
            return tls.send(channel, bs);
        } finally {
            sent += before - bytes(bs);
        }
    }

    private static long bytes(ByteBuffer[] bs) {
        long n = 0;
        for (ByteBuffer b : bs) {
            n += b.remaining();
        }
        return n;
    }

    long sent() {
        return sent;
    }

    /**
     * Waits until the (non-blocking) channel may take bytes again: until {@code deadline} (nanoTime) when that is
     * non-zero, else at most {@code readTimeout} since the socket last took nothing ({@code stuckSince}, nanoTime,
     * or 0 when it took bytes last time). Returns when it started to take nothing, for the next call.
     */
    long awaitWritable(long deadline, long stuckSince) throws IOException {
        long now = System.nanoTime();
        long since = stuckSince != 0 ? stuckSince : now;
        long left = 0;
        if (deadline != 0) {
            left = deadline - now;
        } else if (settings.readTimeout() > 0) {
            left = since + settings.readTimeout() - now;
        }
        if ((deadline != 0 || settings.readTimeout() > 0) && left <= 0) {
            throw writeTimedOut(deadline);
        }
        await(SelectionKey.OP_WRITE, left);
        return since;
    }

    private SocketTimeoutException writeTimedOut(long deadline) {
        return new SocketTimeoutException("write to " + peer() + " timed out: the peer took no bytes for "
                + (deadline != 0 ? "the close delivery time" : Settings.format(settings.readTimeout())
                        + " (readTimeout)"));
    }

    /**
     * Parks until the readiness thread finds the channel ready for {@code op} (OP_READ or OP_WRITE; one thread at a
     * time waits for each), {@code nanos} pass (0: no limit), the close, or an interrupt; the caller then tries the
     * channel again (a wake-up may be spurious).
     */
    private void await(int op, long nanos) throws IOException {
        if (closed) {
            throw new AsynchronousCloseException();
        }
        SelectionKey k;
        try {
            k = key();
        } catch (ClosedChannelException e) {
            throw closed ? new AsynchronousCloseException() : e;
        }
        boolean read = op == SelectionKey.OP_READ;
        Thread me = Thread.currentThread();
        if (read) {
            readWaiter = me;
        } else {
            writeWaiter = me;
        }
        try {
            // published before the interest, and the close sets closed before it unparks: no wake-up is lost
            Readiness.arm(k, op);
            if (closed) {
                throw new AsynchronousCloseException();
            }
            if (nanos > 0) {
                LockSupport.parkNanos(this, nanos);
            } else {
                LockSupport.park(this);
            }
        } catch (CancelledKeyException e) {
            throw new AsynchronousCloseException();
        } finally {
            if (read) {
                readWaiter = null;
            } else {
                writeWaiter = null;
            }
        }
        if (closed) {
            throw new AsynchronousCloseException();
        }
    }

    /**
     * Maps a failure of a channel call to what the contract promises; an interrupt closes the connection through
     * {@code close}.
     */
    IOException failure(IOException e, String what, Runnable close) {
        if (e instanceof ClosedByInterruptException) {
            close.run();
            return e;
        }
        if (closed || e instanceof ClosedChannelException) {
            if (closed && !(e instanceof AsynchronousCloseException)) {
                AsynchronousCloseException ace = new AsynchronousCloseException();
                ace.initCause(e);
                return ace;
            }
            return e;
        }
        if (e instanceof SocketTimeoutException || e instanceof CommunicatorException || e instanceof EOFException
                || e instanceof InterruptedIOException) {
            return e;
        }
        return new CommunicatorException(what + " " + peer() + " failed: " + e.getMessage(), e);
    }

    /** Ends our direction of the stream at close: {@link StreamEnd#endStream}. */
    void endStream(boolean pending, StreamEnd.Flush flush) {
        StreamEnd.endStream(this, pending, flush);
    }

    /** Reads away unread input before the close, unless a reader holds {@code readLock}: {@link StreamEnd}. */
    void discardUnreadInput(ReentrantLock readLock) {
        StreamEnd.discardUnreadInput(this, readLock);
    }

    void close() {
        closed = true;
        TcpServer.closeQuietly(channel);
        LockSupport.unpark(readWaiter);
        LockSupport.unpark(writeWaiter);
        SelectionKey k = key;
        if (k != null) {
            // the close cancelled the channel's key there: the descriptor is released once the selector lets go
            k.selector().wakeup();
        }
    }
}
