package io.rdmacomm.tcp;

import io.rdmacomm.api.Endpoint;
import io.rdmacomm.api.support.AcceptGuard;
import io.rdmacomm.api.support.RateLimitedLog;
import java.io.IOException;
import java.net.SocketTimeoutException;
import java.net.StandardSocketOptions;
import java.nio.channels.AsynchronousCloseException;
import java.nio.channels.CancelledKeyException;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.ClosedSelectorException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A listening socket for {@code wire=raw}: no handshake, so {@link #accept()} hands over each connection as the
 * kernel accepted it, in the accepting thread (no thread of its own). Waits on a selector, so that
 * {@code acceptTimeout} bounds them and {@link #close()} ends them. A failed accept (out of descriptors, or any other
 * failure) does not end {@link #accept()}: it backs off and retries ({@link AcceptGuard}; the raw wire has no way to
 * tell a refused peer why, so such a peer is only closed), and a peer that cannot be set up is dropped; the lines
 * about both are rate-limited.
 */
final class RawServer implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(RawServer.class);

    private final Endpoint endpoint;
    private final Settings settings;
    private final ServerSocketChannel listener;
    /** What accepts are taken from: the listener, or in tests a wrapper that fails on purpose. */
    private final ServerSocketChannel acceptFrom;
    private final Selector selector;
    private final Object acceptLock = new Object();
    /** Used under {@link #acceptLock}. */
    private final AcceptGuard guard;
    private final RateLimitedLog peerLog = new RateLimitedLog(LOG);
    private volatile boolean closed;

    private RawServer(Endpoint endpoint, Settings settings, BoundListener bound,
            UnaryOperator<ServerSocketChannel> acceptVia) {
        this.endpoint = endpoint;
        this.settings = settings;
        this.listener = bound.listener();
        this.acceptFrom = acceptVia.apply(bound.listener());
        this.selector = bound.selector();
        this.guard = new AcceptGuard(endpoint.scheme() + "://" + endpoint.authority(), LOG, null);
    }

    static RawServer bind(Endpoint requested, Settings settings) throws IOException {
        return bind(requested, settings, UnaryOperator.identity());
    }

    /**
     * The same, taking accepts from {@code acceptVia} applied to the listener (tests: a listener whose accepts fail).
     */
    static RawServer bind(Endpoint requested, Settings settings, UnaryOperator<ServerSocketChannel> acceptVia)
            throws IOException {
        BoundListener bound = BoundListener.bind(requested);
        try {
            return new RawServer(bound.endpoint(), settings, bound, acceptVia);
        } catch (RuntimeException e) {
            TcpServer.closeQuietly(bound.listener());
            TcpServer.closeQuietly(bound.selector());
            throw e;
        }
    }

    /** Failed accepts so far (tests). */
    long acceptFailures() {
        synchronized (acceptLock) {
            return guard.failures();
        }
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
                    c = guard.accept(acceptFrom);
                } catch (ClosedChannelException e) {
                    throw closed ? new AsynchronousCloseException() : e;
                }
                if (c != null) {
                    try {
                        c.configureBlocking(false);
                        c.setOption(StandardSocketOptions.TCP_NODELAY, true);
                        return c;
                    } catch (IOException | RuntimeException e) {
                        TcpServer.closeQuietly(c);
                        peerLog.warn("{}: dropped a peer that could not be set up: {}", endpoint, e.toString());
                        continue;
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
                long backoff = guard.backoffMillis();
                try {
                    if (backoff > 0) {
                        // leave the listener alone for the back-off, but still wake for close()
                        SelectionKey key = listener.keyFor(selector);
                        key.interestOps(0);
                        try {
                            selector.select(waitMillis == 0 ? backoff : Math.min(waitMillis, backoff));
                        } finally {
                            if (key.isValid()) {
                                key.interestOps(SelectionKey.OP_ACCEPT);
                            }
                        }
                    } else {
                        selector.select(waitMillis);
                    }
                    selector.selectedKeys().clear();
                } catch (ClosedSelectorException | CancelledKeyException e) {
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
        synchronized (acceptLock) { // a waiting accept() ends at once: its selector is closed
            guard.close();
        }
    }
}
