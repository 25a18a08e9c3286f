package io.rdmacomm.tcp;

import io.rdmacomm.api.Endpoint;
import java.io.IOException;
import java.net.SocketTimeoutException;
import java.net.StandardSocketOptions;
import java.nio.channels.AsynchronousCloseException;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.ClosedSelectorException;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.concurrent.TimeUnit;

/**
 * A listening socket for {@code wire=raw}: no handshake, so {@link #accept()} hands over each connection as the
 * kernel accepted it, in the accepting thread (no thread of its own). Waits on a selector, so that
 * {@code acceptTimeout} bounds them and {@link #close()} ends them.
 */
final class RawServer implements AutoCloseable {
    private final Endpoint endpoint;
    private final Settings settings;
    private final ServerSocketChannel listener;
    private final Selector selector;
    private final Object acceptLock = new Object();
    private volatile boolean closed;

    private RawServer(Endpoint endpoint, Settings settings, ServerSocketChannel listener, Selector selector) {
        this.endpoint = endpoint;
        this.settings = settings;
        this.listener = listener;
        this.selector = selector;
    }

    static RawServer bind(Endpoint requested, Settings settings) throws IOException {
        BoundListener bound = BoundListener.bind(requested);
        return new RawServer(bound.endpoint(), settings, bound.listener(), bound.selector());
    }

    /** The endpoint with the bound port. */
    Endpoint endpoint() {
        return endpoint;
    }

    /** The next peer's channel (non-blocking, {@code TCP_NODELAY}, registered nowhere). */
    SocketChannel accept() throws IOException {
        long timeout = settings.acceptTimeout();
        long deadline = System.nanoTime() + timeout;
        synchronized (acceptLock) {
            for (;;) {
                if (closed) {
                    throw new AsynchronousCloseException();
                }
                SocketChannel c;
                try {
                    c = listener.accept();
                } catch (ClosedChannelException e) {
                    throw closed ? new AsynchronousCloseException() : e;
                }
                if (c != null) {
                    try {
                        c.configureBlocking(false);
                        c.setOption(StandardSocketOptions.TCP_NODELAY, true);
                        return c;
                    } catch (IOException e) {
                        TcpServer.closeQuietly(c);
                        throw new IOException("setting up a peer accepted on " + endpoint + " failed: " + e, e);
                    }
                }
                long waitMillis = 0;
                if (timeout > 0) {
                    long left = deadline - System.nanoTime();
                    if (left <= 0) {
                        throw new SocketTimeoutException("no peer connected to " + endpoint + " within "
                                + Settings.format(timeout) + " (acceptTimeout)");
                    }
                    waitMillis = TimeUnit.NANOSECONDS.toMillis(left) + 1;
                }
                try {
                    selector.select(waitMillis);
                    selector.selectedKeys().clear();
                } catch (ClosedSelectorException e) {
                    throw new AsynchronousCloseException();
                }
            }
        }
    }

    /** Stops listening; a waiting {@link #accept()} ends with {@link AsynchronousCloseException}. */
    @Override
    public void close() {
        closed = true;
        TcpServer.closeQuietly(selector);
        TcpServer.closeQuietly(listener);
    }
}
