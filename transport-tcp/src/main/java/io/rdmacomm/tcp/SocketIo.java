package io.rdmacomm.tcp;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.channels.AsynchronousCloseException;
import java.nio.channels.ClosedSelectorException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * A connection's socket and how threads wait on it, below the framing. With neither a read timeout nor busy
 * polling the channel stays in blocking mode, the cheapest wait; otherwise it is non-blocking and waits on one
 * selector per direction, so a reader and a writer never share one.
 */
final class SocketIo {
    /** For selects that only wait: the selected-key set is left alone, so a wait allocates nothing. */
    private static final Consumer<SelectionKey> JUST_WAKE = k -> { };

    private final SocketChannel channel;
    private final Settings settings;
    private final String peer;
    private final boolean blocking;
    private final Selector readSelector;
    private final Selector writeSelector;
    /**
     * Set just before the channel closes: waits end with AsynchronousCloseException, and failures of channel calls
     * are reported as such.
     */
    private volatile boolean closed;

    private SocketIo(SocketChannel channel, Settings settings, String peer, Selector readSelector,
            Selector writeSelector) {
        this.channel = channel;
        this.settings = settings;
        this.peer = peer;
        this.blocking = readSelector == null;
        this.readSelector = readSelector;
        this.writeSelector = writeSelector;
    }

    /** Takes over a handshaken channel (blocking or not, registered nowhere); closes it on failure. */
    static SocketIo open(SocketChannel channel, Settings settings) throws IOException {
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
            return new SocketIo(channel, settings, peer, readSelector, writeSelector);
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
     * One channel read of at least one byte into {@code b} (which has space), or -1 at end of stream; spins for
     * {@code busyPoll} first, then waits up to {@code timeout} (0: no limit).
     */
    int readSome(ByteBuffer b, long timeout) throws IOException {
        if (blocking) {
            return channel.read(b);
        }
        int n = channel.read(b);
        if (n != 0) {
            return n;
        }
        if (settings.busyPoll() > 0) {
            long spinEnd = System.nanoTime() + settings.busyPoll();
            do {
                Thread.onSpinWait();
                n = channel.read(b);
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
            n = channel.read(b);
            if (n != 0) {
                return n;
            }
        }
    }

    /** Writes what the channel takes now (all of it in blocking mode). */
    int write(ByteBuffer b) throws IOException {
        return channel.write(b);
    }

    /** Writes what the channel takes now of the buffers, in order (all of it in blocking mode). */
    long write(ByteBuffer[] bs) throws IOException {
        return channel.write(bs);
    }

    /**
     * Waits until the (non-blocking) channel takes bytes again: at most {@code readTimeout}, or until
     * {@code deadline} (nanoTime) when that is non-zero.
     */
    void awaitWritable(long deadline) throws IOException {
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

    /** Ends our direction of the stream: the peer reads -1 after what was sent. */
    void shutdownOutput() throws IOException {
        channel.shutdownOutput();
    }

    /**
     * Reads away what arrived and nobody will read, as far as it is already there: closing a socket with unread
     * input makes the kernel reset the connection, and the peer could lose the end of our stream.
     */
    void discardInput() throws IOException {
        if (blocking) {
            channel.configureBlocking(false);
        }
        ByteBuffer scratch = ByteBuffer.allocate(64 * 1024);
        for (int i = 0; i < 16 && channel.read(scratch) > 0; i++) {
            scratch.clear();
        }
    }

    /** Closes the channel only, failing a blocking call in progress; for a watchdog. */
    void abort() {
        TcpServer.closeQuietly(channel);
    }

    void close() {
        closed = true;
        TcpServer.closeQuietly(channel);
        if (readSelector != null) {
            TcpServer.closeQuietly(readSelector);
            TcpServer.closeQuietly(writeSelector);
        }
    }
}
