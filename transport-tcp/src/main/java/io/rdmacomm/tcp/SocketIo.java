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
import java.nio.channels.ClosedSelectorException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A connection's socket and how threads wait on it, below the framing. With neither a read timeout, busy polling
 * nor liveness the channel starts in blocking mode, the cheapest wait; otherwise it is non-blocking and waits on
 * one selector per direction, so a reader and a writer never share one. A blocking channel turns non-blocking for
 * good when its reader first asks what it could read without waiting ({@link #makeNonBlocking}); armed channels
 * also wait for input on the process's {@link Readiness} selector.
 */
final class SocketIo {
    private static final Logger LOG = LoggerFactory.getLogger(SocketIo.class);
    private static final long CLOSE_DELIVERY_DEFAULT = TimeUnit.SECONDS.toNanos(3);
    /** For selects that only wait: the selected-key set is left alone, so a wait allocates nothing. */
    private static final Consumer<SelectionKey> JUST_WAKE = k -> { };

    private final SocketChannel channel;
    /** The connection's TLS, or null for plain TCP. */
    private final TlsSession tls;
    private final Settings settings;
    private final String peer;
    /** Changes once at most, from true to false ({@link #makeNonBlocking}), under the read lock. */
    private volatile boolean blocking;
    private volatile Selector readSelector;
    private volatile Selector writeSelector;
    /** Guards the selectors between {@link #makeNonBlocking} and {@link #close}. */
    private final Object selectors = new Object();
    /** The {@link Readiness} instance the channel joined on its first arming, or null; its key there once known. */
    private volatile Readiness readiness;
    private SelectionKey readinessKey;
    /**
     * Set just before the channel closes: waits end with AsynchronousCloseException, and failures of channel calls
     * are reported as such.
     */
    private volatile boolean closed;
    /** Bytes the channel took so far (with TLS: plaintext sealed), for the liveness thread; one writer at a time. */
    private volatile long sent;

    private SocketIo(SocketChannel channel, TlsSession tls, Settings settings, String peer, Selector readSelector,
            Selector writeSelector) {
        this.channel = channel;
        this.tls = tls;
        this.settings = settings;
        this.peer = peer;
        this.blocking = readSelector == null;
        this.readSelector = readSelector;
        this.writeSelector = writeSelector;
    }

    /**
     * Takes over a handshaken channel (blocking or not, registered nowhere) with its TLS session, or null for plain
     * TCP; closes it on failure.
     */
    static SocketIo open(SocketChannel channel, TlsSession tls, Settings settings) throws IOException {
        Selector readSelector = null;
        Selector writeSelector = null;
        try {
            String peer = describe(channel.getRemoteAddress());
            if (settings.blockingChannel()) {
                channel.configureBlocking(true);
            } else {
                channel.configureBlocking(false);
                readSelector = Selector.open();
                writeSelector = Selector.open();
                channel.register(readSelector, SelectionKey.OP_READ);
                channel.register(writeSelector, SelectionKey.OP_WRITE);
            }
            return new SocketIo(channel, tls, settings, peer, readSelector, writeSelector);
        } catch (IOException | RuntimeException e) {
            TcpServer.closeQuietly(channel);
            if (readSelector != null) {
                TcpServer.closeQuietly(readSelector);
            }
            if (writeSelector != null) {
                TcpServer.closeQuietly(writeSelector);
            }
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

    String peer() {
        return peer;
    }

    boolean blocking() {
        return blocking;
    }

    boolean isClosed() {
        return closed;
    }

    /**
     * Turns a blocking channel non-blocking, for good, with a selector per direction as {@link #open} gives a
     * non-blocking one; does nothing on a non-blocking channel. The caller holds the read lock, so no read is on
     * the channel; a blocking write in progress is waited for (the channel's own lock). The selectors are in place
     * before the mode changes, and woken after the channel joined them, so a writer that finds the channel
     * non-blocking always has a selector to wait on.
     */
    void makeNonBlocking() throws IOException {
        synchronized (selectors) {
            if (!blocking) {
                return;
            }
            if (closed) {
                throw new AsynchronousCloseException();
            }
            Selector r = Selector.open();
            Selector w;
            try {
                w = Selector.open();
            } catch (IOException | RuntimeException e) {
                TcpServer.closeQuietly(r);
                throw e;
            }
            readSelector = r;
            writeSelector = w;
            try {
                channel.configureBlocking(false);
                channel.register(r, SelectionKey.OP_READ);
                channel.register(w, SelectionKey.OP_WRITE);
            } catch (IOException | RuntimeException e) {
                readSelector = null;
                writeSelector = null;
                TcpServer.closeQuietly(r);
                TcpServer.closeQuietly(w);
                throw e;
            }
            w.wakeup();
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
     * readiness thread once the channel is readable. Called by the reader.
     *
     * @throws CancelledKeyException if the channel was closed
     */
    void armReadable(Runnable onReadable) throws IOException {
        SelectionKey k = readinessKey;
        if (k == null) {
            Readiness r = readiness;
            if (r == null) {
                r = Readiness.join(channel, onReadable);
                readiness = r;
                if (closed) {
                    r.wakeup(); // a close that did not see it joining: let go of the key
                }
                return;
            }
            k = r.keyOf(channel);
            if (k == null) {
                return; // still joining: it joins with interest OP_READ
            }
            readinessKey = k;
        }
        Readiness.arm(k);
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
            long waitMillis = 0;
            if (timeout > 0) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    throw new SocketTimeoutException("read from " + peer + " timed out after "
                            + Settings.format(timeout) + " (readTimeout)");
                }
                waitMillis = TimeUnit.NANOSECONDS.toMillis(left) + 1;
            }
            await(readSelector, waitMillis);
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
        while (b.hasRemaining()) {
            int n = channel.write(b);
            sent += n;
            if (n == 0) {
                awaitWritable(deadline);
            }
        }
    }

    /** Sends all of the buffers, in order, in gathering writes; waits as {@link #writeFully(ByteBuffer, long)}. */
    void writeFully(ByteBuffer[] bs, long deadline) throws IOException {
        if (tls == null) {
            while (TlsSession.remaining(bs)) {
                long n = channel.write(bs);
                sent += n;
                if (n == 0) {
                    awaitWritable(deadline);
                }
            }
            return;
        }
        tls.output().lock();
        try {
            while (!tlsSend(bs)) {
                awaitWritable(deadline);
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

    /** Sends TLS's close_notify, which the peer reads as the end of the stream. */
    private void closeTls(long deadline) throws IOException {
        tls.output().lock();
        try {
            tls.closeOutbound();
            while (!tls.flush(channel)) {
                awaitWritable(deadline);
            }
        } finally {
            tls.output().unlock();
        }
    }

    /**
     * Waits until the (non-blocking) channel takes bytes again: at most {@code readTimeout}, or until
     * {@code deadline} (nanoTime) when that is non-zero.
     */
    private void awaitWritable(long deadline) throws IOException {
        long limit = deadline != 0 ? deadline - System.nanoTime() : settings.readTimeout();
        long waitMillis = 0;
        if (deadline != 0 || limit > 0) {
            if (limit <= 0) {
                throw writeTimedOut(deadline);
            }
            waitMillis = TimeUnit.NANOSECONDS.toMillis(limit) + 1;
        }
        if (await(writeSelector, waitMillis) == 0 && waitMillis > 0) {
            throw writeTimedOut(deadline);
        }
    }

    private SocketTimeoutException writeTimedOut(long deadline) {
        return new SocketTimeoutException("write to " + peer + " timed out: the peer took no bytes for "
                + (deadline != 0 ? "the close delivery time" : Settings.format(settings.readTimeout())
                        + " (readTimeout)"));
    }

    /** Waits on a selector; returns how many keys became ready (0 when the wait timed out). */
    private int await(Selector selector, long millis) throws IOException {
        if (closed) {
            throw new AsynchronousCloseException();
        }
        int ready;
        try {
            ready = selector.select(JUST_WAKE, millis);
        } catch (ClosedSelectorException e) {
            throw new AsynchronousCloseException();
        }
        if (closed) {
            throw new AsynchronousCloseException();
        }
        return ready;
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
        return new CommunicatorException(what + " " + peer + " failed: " + e.getMessage(), e);
    }

    /** A send that may block: {@link #guarded} runs it. */
    @FunctionalInterface
    interface Send {
        void run() throws IOException;
    }

    /**
     * Runs {@code send} with a watchdog that closes the channel if it takes longer than {@code budget}
     * nanoseconds: a blocking write cannot time out, and close must not hang on a peer that takes nothing.
     */
    private void guarded(long budget, Send send) throws IOException {
        CountDownLatch done = new CountDownLatch(1);
        Thread watchdog = new Thread(() -> {
            try {
                if (!done.await(budget, TimeUnit.NANOSECONDS)) {
                    TcpServer.closeQuietly(channel);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "rdmacomm-tcp-close-watchdog");
        watchdog.setDaemon(true);
        watchdog.start();
        try {
            send.run();
        } finally {
            done.countDown();
            TcpConnection.join(watchdog);
        }
    }

    /** How a writer sends what it buffered: waiting until {@code deadline} (nanoTime), or without limit if 0. */
    @FunctionalInterface
    interface Flush {
        void run(long deadline) throws IOException;
    }

    /**
     * Ends our direction of the stream at close: sends what was buffered ({@code pending}) within the read timeout,
     * or a few seconds without one, then shuts the output down so the peer reads -1. Failures are logged: the
     * close goes on.
     */
    void endStream(boolean pending, Flush flush) {
        long budget = settings.readTimeout() > 0 ? settings.readTimeout() : CLOSE_DELIVERY_DEFAULT;
        try {
            if (pending || tls != null) {
                Flush all = tls == null ? flush : deadline -> {
                    if (pending) {
                        flush.run(deadline);
                    }
                    closeTls(deadline);
                };
                if (blocking) {
                    guarded(budget, () -> all.run(0));
                } else {
                    all.run(System.nanoTime() + budget);
                }
            }
            channel.shutdownOutput();
        } catch (IOException e) {
            LOG.debug("bytes written to {} before close could not be delivered", peer, e);
        }
    }

    /**
     * Unless a reader holds {@code readLock}, reads away what arrived and nobody will read, as far as it is already
     * there: closing a socket with unread input makes the kernel reset the connection, and the peer could lose the
     * end of our stream.
     */
    void discardUnreadInput(ReentrantLock readLock) {
        if (!readLock.tryLock()) {
            return;
        }
        try {
            if (blocking) {
                channel.configureBlocking(false);
            }
            ByteBuffer scratch = ByteBuffer.allocate(64 * 1024);
            for (int i = 0; i < 16 && channel.read(scratch) > 0; i++) {
                scratch.clear();
            }
        } catch (IOException e) {
            LOG.debug("discarding unread input from {} failed", peer, e);
        } finally {
            readLock.unlock();
        }
    }

    void close() {
        closed = true;
        TcpServer.closeQuietly(channel);
        synchronized (selectors) {
            if (readSelector != null) {
                TcpServer.closeQuietly(readSelector);
                TcpServer.closeQuietly(writeSelector);
            }
        }
        Readiness r = readiness;
        if (r != null) {
            // the close cancelled the channel's key there: the descriptor is released once the selector lets go
            r.wakeup();
        }
    }
}
