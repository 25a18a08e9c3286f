package io.rdmacomm.tcp;

import io.rdmacomm.api.Endpoint;
import io.rdmacomm.tcp.TcpServer.Accepted;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.SocketTimeoutException;
import java.nio.channels.AsynchronousCloseException;
import java.nio.channels.Selector;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * The handshaken peers of a {@link TcpServer} waiting for {@link TcpServer#accept()}: the accept thread adds them,
 * the application takes them. Once the listener is gone the queue holds that failure, once the server is closed a
 * mark, so that every later take fails the same way. While {@link TcpServer#READY_MAX} peers wait the accept thread
 * stops accepting; a take then wakes it (its selector) to accept again.
 */
final class ReadyPeers {
    private static final Object CLOSED = new Object();

    private final Endpoint endpoint;
    /** The accept thread's selector, woken when a peer is taken off a full queue. */
    private final Selector selector;
    /** Handshaken peers ({@link Accepted}), an {@link IOException} if the listener is gone, or {@link #CLOSED}. */
    private final LinkedBlockingQueue<Object> ready = new LinkedBlockingQueue<>();
    private volatile boolean readyFull;

    ReadyPeers(Endpoint endpoint, Selector selector) {
        this.endpoint = endpoint;
        this.selector = selector;
    }

    /** Peers waiting. */
    int size() {
        return ready.size();
    }

    /** Whether {@link TcpServer#READY_MAX} peers wait; remembered, so that the next take wakes the accept thread. */
    boolean checkFull() {
        boolean full = ready.size() >= TcpServer.READY_MAX;
        readyFull = full;
        return full;
    }

    /** Queues a handshaken peer. */
    void add(Accepted a) {
        ready.offer(a);
    }

    /** The listener is gone: every take from now on fails with {@code e}. */
    void failed(IOException e) {
        ready.offer(e);
    }

    /**
     * The next handshaken peer, waiting up to {@code acceptTimeout} ns for one (0: for ever).
     *
     * @throws SocketTimeoutException if none came within the timeout
     * @throws AsynchronousCloseException if the server was closed
     * @throws IOException if the listener is gone
     */
    Accepted take(long acceptTimeout) throws IOException {
        Object next;
        try {
            next = acceptTimeout == 0 ? ready.take() : ready.poll(acceptTimeout, TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("interrupted while accepting on " + endpoint);
        }
        if (next == null) {
            throw new SocketTimeoutException("no peer connected to " + endpoint + " within "
                    + Settings.format(acceptTimeout) + " (acceptTimeout)");
        }
        if (readyFull) {
            selector.wakeup();
        }
        if (next == CLOSED) {
            ready.offer(CLOSED);
            throw new AsynchronousCloseException();
        }
        if (next instanceof IOException e) {
            ready.offer(e); // the accept thread is gone: every later accept fails the same way
            throw new IOException("accepting on " + endpoint + " failed: " + e.getMessage(), e);
        }
        return (Accepted) next;
    }

    /** Closes the channels of the peers still waiting and marks the queue closed. */
    void close() {
        for (Object o; (o = ready.poll()) != null; ) {
            if (o instanceof Accepted a) {
                TcpServer.closeQuietly(a.channel());
            }
        }
        ready.offer(CLOSED);
    }
}
