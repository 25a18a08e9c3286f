package io.rdmacomm.tcp;

import io.rdmacomm.api.Endpoint;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.SocketTimeoutException;
import java.net.StandardSocketOptions;
import java.nio.channels.AsynchronousCloseException;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A listening socket. One thread ("rdmacomm-tcp-accept") multiplexes accepting and every pending handshake
 * on one selector, so a silent or slow client delays nobody; peers that complete the handshake queue up for
 * {@link #accept()}. At most {@link #BACKLOG} peers wait in handshake: a further peer evicts the oldest of them,
 * so silent connections, however many, cannot keep a real client out (each is dropped at its handshakeTimeout
 * anyway). At most {@link #BACKLOG} handshaken peers wait for {@link #accept()}; then the thread stops accepting,
 * leaving further peers in the kernel's listen backlog until the application accepts.
 */
final class TcpServer implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(TcpServer.class);
    static final int BACKLOG = 128;
    private static final Object CLOSED = new Object();

    private final Endpoint endpoint;
    private final Settings settings;
    private final ServerSocketChannel listener;
    private final Selector selector;
    private final Thread thread;
    /** Handshaken peers ({@link Accepted}), {@link IOException}s of the listener, or {@link #CLOSED}. */
    private final LinkedBlockingQueue<Object> ready = new LinkedBlockingQueue<>();
    /** Keys of peers in handshake, oldest first (handshakes share one timeout, so also by deadline). */
    private final LinkedHashSet<SelectionKey> pending = new LinkedHashSet<>();
    private volatile boolean closed;
    private volatile boolean paused;

    private TcpServer(Endpoint endpoint, Settings settings, ServerSocketChannel listener, Selector selector) {
        this.endpoint = endpoint;
        this.settings = settings;
        this.listener = listener;
        this.selector = selector;
        this.thread = new Thread(this::run, "rdmacomm-tcp-accept");
        thread.setDaemon(true);
    }

    /**
     * A handshaken peer: its channel, its TLS session (null without TLS) and the heartbeat period it asked for (0:
     * heartbeats off).
     */
    record Accepted(SocketChannel channel, TlsSession tls, long peerHeartbeat) {
    }

    static TcpServer bind(Endpoint requested, Settings settings) throws IOException {
        if (settings.tls() != null) {
            settings.tls().checkServer(requested);
        }
        BoundListener bound = BoundListener.bind(requested);
        TcpServer server = new TcpServer(bound.endpoint(), settings, bound.listener(), bound.selector());
        server.thread.start();
        return server;
    }

    /** The endpoint with the bound port. */
    Endpoint endpoint() {
        return endpoint;
    }

    /** The next handshaken peer (its channel non-blocking, registered nowhere). */
    Accepted accept() throws IOException {
        if (closed) {
            throw new ClosedChannelException();
        }
        Object next;
        try {
            next = settings.acceptTimeout() == 0 ? ready.take()
                    : ready.poll(settings.acceptTimeout(), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("interrupted while accepting on " + endpoint);
        }
        if (next == null) {
            throw new SocketTimeoutException("no peer connected to " + endpoint + " within "
                    + Settings.format(settings.acceptTimeout()) + " (acceptTimeout)");
        }
        if (paused) {
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

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        selector.wakeup();
        try {
            thread.join(TimeUnit.SECONDS.toMillis(10));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (thread.isAlive()) {
            LOG.warn("{}: accept thread did not stop within 10s", endpoint);
        }
        for (Object o; (o = ready.poll()) != null; ) {
            if (o instanceof Accepted a) {
                closeQuietly(a.channel());
            }
        }
        ready.offer(CLOSED);
    }

    private void run() {
        List<Accepted> done = new ArrayList<>();
        try {
            while (!closed) {
                long wait = expireHandshakes();
                selector.select(wait);
                if (closed) {
                    break;
                }
                for (SelectionKey key : selector.selectedKeys()) {
                    if (!key.isValid()) {
                        continue;
                    }
                    if (key.channel() == listener) {
                        acceptAll();
                    } else {
                        Handshake.Accepting p = (Handshake.Accepting) key.attachment();
                        if (handshake(key, p)) {
                            drop(key);
                            done.add(new Accepted((SocketChannel) key.channel(), p.tls, p.peerHeartbeat()));
                        }
                    }
                }
                selector.selectedKeys().clear();
                if (!done.isEmpty()) {
                    selector.selectNow(); // deregisters the cancelled keys so the channels may turn blocking
                    selector.selectedKeys().clear();
                    for (Accepted a : done) {
                        handOver(a);
                    }
                    done.clear();
                }
                updateAcceptInterest();
            }
        } catch (IOException | RuntimeException e) {
            if (!closed) {
                LOG.error("{}: accept thread failed; no further peers will be accepted", endpoint, e);
                ready.offer(new IOException("accept thread failed: " + e, e));
            }
        } finally {
            for (SelectionKey key : selector.keys()) {
                if (key.channel() != listener) {
                    closeQuietly(key.channel());
                }
            }
            for (Accepted a : done) {
                closeQuietly(a.channel());
            }
            closeQuietly(listener);
            closeQuietly(selector);
        }
    }

    /** Drops peers past their deadline; returns the select timeout in ms until the next deadline (0 = none). */
    private long expireHandshakes() {
        long now = System.nanoTime();
        for (Iterator<SelectionKey> it = pending.iterator(); it.hasNext(); ) {
            SelectionKey key = it.next();
            Handshake.Accepting p = (Handshake.Accepting) key.attachment();
            long left = p.deadline - now;
            if (left > 0) {
                return Math.max(1, TimeUnit.NANOSECONDS.toMillis(left) + 1);
            }
            LOG.warn("{}: dropped peer {}: no complete handshake within {} (handshakeTimeout); got {}",
                    endpoint, p.peer, Settings.format(settings.handshakeTimeout()), p.received());
            it.remove();
            key.cancel();
            closeQuietly(key.channel());
        }
        return 0;
    }

    /** Forgets a peer's handshake; its key leaves the selector at the next select. */
    private void drop(SelectionKey key) {
        pending.remove(key);
        key.cancel();
    }

    /** Makes room for one more handshake by dropping the oldest, whose peer had the longest time to speak. */
    private void evictOldestHandshake() {
        Iterator<SelectionKey> it = pending.iterator();
        SelectionKey oldest = it.next();
        it.remove();
        oldest.cancel();
        Handshake.Accepting p = (Handshake.Accepting) oldest.attachment();
        LOG.warn("{}: dropped peer {}: {} peers were in handshake and another arrived; got {}", endpoint, p.peer,
                BACKLOG, p.received());
        closeQuietly(oldest.channel());
    }

    /** Accepting pauses only while {@link #accept()} has {@link #BACKLOG} peers waiting for it. */
    private void updateAcceptInterest() {
        SelectionKey key = listener.keyFor(selector);
        boolean full = ready.size() >= BACKLOG;
        if (full != paused) {
            paused = full;
            key.interestOps(full ? 0 : SelectionKey.OP_ACCEPT);
        }
    }

    private void acceptAll() throws IOException {
        SocketChannel c;
        while (ready.size() < BACKLOG && (c = listener.accept()) != null) {
            if (pending.size() >= BACKLOG) {
                evictOldestHandshake();
            }
            String peer = "unknown peer";
            try {
                peer = SocketIo.describe(c.getRemoteAddress());
                c.configureBlocking(false);
                c.setOption(StandardSocketOptions.TCP_NODELAY, true);
                long timeout = settings.handshakeTimeout() == 0 ? Settings.FOREVER : settings.handshakeTimeout();
                long deadline = System.nanoTime() + timeout;
                TlsSession tls = settings.tls() == null ? null
                        : new TlsSession(settings.tls().serverEngine(), peer);
                pending.add(c.register(selector, SelectionKey.OP_READ, new Handshake.Accepting(deadline, peer,
                        settings.secret(), tls, settings.heartbeatBits())));
            } catch (IOException e) {
                LOG.warn("{}: dropped peer {}: {}", endpoint, peer, e.toString());
                closeQuietly(c);
            }
        }
    }

    /** Advances a peer's handshake; returns true when it succeeded and was answered. */
    private boolean handshake(SelectionKey key, Handshake.Accepting p) {
        try {
            return p.advance(key);
        } catch (IOException | RuntimeException e) {
            LOG.warn("{}: rejected peer {}: {}", endpoint, p.peer, e.getMessage());
            drop(key);
            closeQuietly(key.channel());
            return false;
        }
    }

    private void handOver(Accepted a) {
        if (closed) {
            closeQuietly(a.channel());
            return;
        }
        ready.offer(a);
    }

    static void closeQuietly(AutoCloseable c) {
        try {
            c.close();
        } catch (Exception e) {
            LOG.debug("close failed", e);
        }
    }
}
