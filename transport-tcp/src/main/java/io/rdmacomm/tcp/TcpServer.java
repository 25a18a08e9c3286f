package io.rdmacomm.tcp;

import io.rdmacomm.api.Endpoint;
import io.rdmacomm.api.EndpointOption;
import io.rdmacomm.api.support.AcceptGuard;
import io.rdmacomm.api.support.RateLimitedLog;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.net.StandardSocketOptions;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.ClosedSelectorException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.UnaryOperator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A listening socket. One thread ("rdmacomm-tcp-accept") multiplexes accepting and every pending handshake on one
 * selector, so a silent or slow client delays nobody; peers that complete the handshake queue up for
 * {@link #accept()}.
 *
 * <p>Limits, so that neither a flood of connections nor a burst of real clients makes it lose peers or die:
 * <ul>
 * <li>The kernel holds peers not yet accepted in the listen queue, {@code backlog} long ({@link BoundListener}).
 * <li>At most {@code maxHandshakes} peers are in handshake at once. When that many are, a newcomer takes the place of
 * the peer that has been silent longest (sent no byte since it was accepted), but only once it has been silent for
 * {@link #EVICT_SILENT_AFTER_NANOS}: a live client that was not scheduled yet is never dropped for another. While
 * every peer in handshake is younger or talking, the thread stops accepting and newcomers wait in the listen queue
 * until a slot frees. Each peer is dropped at its {@code handshakeTimeout} anyway ({@link PendingHandshakes}).
 * <li>When the process runs out of descriptors, accepting backs off and retries ({@link AcceptGuard}); silent peers
 * are dropped to make room for waiting ones, and for a while fewer peers are held in handshake, so that
 * {@link DescriptorPressure#HEADROOM} descriptors stay free for the application to set up the connections it
 * accepts.
 * <li>At most {@link #READY_MAX} handshaken peers wait for {@link #accept()} ({@link ReadyPeers}); then the thread
 * stops accepting, leaving further peers in the listen queue until the application accepts.
 * </ul>
 * A failure with one peer drops that peer only, and a failure of the loop itself is retried after a short pause: the
 * thread ends only when the server is closed. Lines about dropped peers and failed accepts are rate-limited
 * ({@link RateLimitedLog}), so that a slow log never slows accepting.
 */
final class TcpServer implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(TcpServer.class);
    /** Handshaken peers waiting for {@link #accept()} at most; past it the thread stops accepting. */
    static final int READY_MAX = 128;
    /** A peer in handshake that sent nothing for this long may be dropped for a waiting newcomer. */
    static final long EVICT_SILENT_AFTER_NANOS = TimeUnit.SECONDS.toNanos(1);
    /** Peers accepted per turn of the loop at most, so that handshakes progress during a burst. */
    private static final int ACCEPT_BATCH = 256;
    /** The most bytes {@link #discardUnread} reads from a refused peer. */
    private static final int DISCARD_MAX = 64 * 1024;
    /** How long the loop pauses after a failure of its own (not of one peer's), before it goes on. */
    private static final long LOOP_FAILURE_PAUSE_NANOS = TimeUnit.MILLISECONDS.toNanos(10);

    private final Endpoint endpoint;
    private final Settings settings;
    private final ServerSocketChannel listener;
    /** What accepts are taken from: the listener, or in tests a wrapper that fails on purpose. */
    private final ServerSocketChannel acceptFrom;
    private final Selector selector;
    private final Thread thread;
    private final int maxHandshakes;
    private final AcceptGuard guard;
    private final RateLimitedLog peerLog = new RateLimitedLog(LOG);
    private final RateLimitedLog loopLog = new RateLimitedLog(LOG);
    /** Handshaken peers waiting for {@link #accept()}. */
    private final ReadyPeers ready;
    /** Peers in handshake. */
    private final PendingHandshakes pending;
    /** Peers handshaken in this turn of the loop, handed over once their keys left the selector. */
    private final List<Accepted> done = new ArrayList<>();
    /** Where {@link #discardUnread} drops a refused peer's bytes (the accept thread's alone). */
    private final ByteBuffer discard = ByteBuffer.allocate(8192);
    /** How many peers may be in handshake while the process is at its descriptor limit. */
    private final DescriptorPressure descriptors = new DescriptorPressure();
    private boolean accepting = true;
    private volatile boolean closed;

    private TcpServer(Endpoint endpoint, Settings settings, BoundListener bound, int maxHandshakes,
            UnaryOperator<ServerSocketChannel> acceptVia) {
        this.endpoint = endpoint;
        this.settings = settings;
        this.listener = bound.listener();
        this.acceptFrom = acceptVia.apply(bound.listener());
        this.selector = bound.selector();
        this.ready = new ReadyPeers(endpoint, selector);
        this.pending = new PendingHandshakes(endpoint, settings, selector, peerLog);
        this.maxHandshakes = maxHandshakes;
        this.guard = new AcceptGuard(endpoint.scheme() + "://" + endpoint.authority(), LOG, null, this::makeRoom);
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
        return bind(requested, settings, UnaryOperator.identity());
    }

    /**
     * The same, taking accepts from {@code acceptVia} applied to the listener (tests: a listener whose accepts fail).
     */
    static TcpServer bind(Endpoint requested, Settings settings, UnaryOperator<ServerSocketChannel> acceptVia)
            throws IOException {
        if (settings.tls() != null) {
            settings.tls().checkServer(requested);
        }
        int maxHandshakes = maxHandshakes(requested);
        BoundListener bound = BoundListener.bind(requested);
        TcpServer server;
        try {
            server = new TcpServer(bound.endpoint(), settings, bound, maxHandshakes, acceptVia);
        } catch (RuntimeException e) {
            closeQuietly(bound.listener());
            closeQuietly(bound.selector());
            throw e;
        }
        server.thread.start();
        return server;
    }

    /**
     * The endpoint's {@code maxHandshakes}.
     *
     * @throws IllegalArgumentException if it is 0
     */
    static int maxHandshakes(Endpoint e) {
        int n = e.intSize(EndpointOption.MAX_HANDSHAKES);
        if (n < 1) {
            throw new IllegalArgumentException("option 'maxHandshakes' = " + n + " on " + e
                    + ": at least 1 peer must be able to handshake");
        }
        return n;
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
        return ready.take(settings.acceptTimeout());
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
        ready.close();
    }

    /** Failed accepts so far (tests). */
    long acceptFailures() {
        return guard.failures();
    }

    private void run() {
        try {
            while (!closed) {
                try {
                    turn();
                } catch (ClosedChannelException | ClosedSelectorException e) {
                    if (!closed) {
                        // only close() closes them, so this is past repair: say so to every accept()
                        LOG.error("{}: the listening socket was closed under the accept thread; no further peers"
                                + " will be accepted", endpoint, e);
                        ready.failed(new IOException("the listening socket was closed: " + e, e));
                    }
                    return;
                } catch (Exception | Error e) {
                    if (closed) {
                        return;
                    }
                    loopLog.warn("{}: the accept thread failed: {}; going on in {}", endpoint, e.toString(),
                            Settings.format(LOOP_FAILURE_PAUSE_NANOS));
                    LockSupport.parkNanos(LOOP_FAILURE_PAUSE_NANOS);
                }
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
            guard.close();
            closeQuietly(listener);
            closeQuietly(selector);
        }
    }

    /** One turn of the loop: wait for the listener or a peer, then serve what is ready. */
    private void turn() throws IOException {
        long now = System.nanoTime();
        long wait = pending.expire(now);
        wait = earliest(wait, descriptors.check(pending.size(), now));
        wait = earliest(wait, updateAcceptInterest(now));
        selector.select(wait);
        if (closed) {
            return;
        }
        boolean acceptable = false;
        for (SelectionKey key : selector.selectedKeys()) {
            if (!key.isValid()) {
                continue;
            }
            if (key.channel() == listener) {
                acceptable = true;
            } else {
                advance(key);
            }
        }
        selector.selectedKeys().clear();
        handOverDone();
        if (acceptable && accepting) {
            acceptAll();
        }
    }

    /** The earlier of two select timeouts in ms, where 0 means none. */
    private static long earliest(long a, long b) {
        return a == 0 ? b : b == 0 ? a : Math.min(a, b);
    }

    /** The select timeout in ms for {@code nanos} from now: at least 1, rounded up. */
    static long millisUntil(long nanos) {
        return Math.max(1, TimeUnit.NANOSECONDS.toMillis(nanos + 999_999));
    }

    /** Advances one peer's handshake; whatever goes wrong drops that peer only. */
    private void advance(SelectionKey key) {
        PendingHandshakes.Pending p = (PendingHandshakes.Pending) key.attachment();
        try {
            if (p.handshake().advance(key)) {
                pending.completed(key);
                done.add(new Accepted((SocketChannel) key.channel(), p.handshake().tls,
                        p.handshake().peerHeartbeat()));
            } else if (p.handshake().heard()) {
                // the peer has sent bytes (on this readiness or on the attempt at admission): it is not silent
                pending.heard(key);
            }
        } catch (Exception | Error e) {
            peerLog.warn("{}: rejected peer {}: {}", endpoint, p.handshake().peer,
                    e.getMessage() == null ? e.toString() : e.getMessage());
            discardUnread((SocketChannel) key.channel());
            pending.forget(key);
        }
    }

    private void handOverDone() throws IOException {
        if (done.isEmpty()) {
            return;
        }
        pending.flush();
        for (Accepted a : done) {
            if (closed) {
                closeQuietly(a.channel());
            } else {
                ready.add(a);
            }
        }
        done.clear();
    }

    /**
     * Turns accepting on or off: off while backing off after a failed accept, while {@link #accept()} has
     * {@link #READY_MAX} peers waiting, and while the handshakes are full with none silent long enough to drop.
     *
     * @return the select timeout in ms until accepting may resume on its own (0: none, it resumes on an event)
     */
    private long updateAcceptInterest(long now) {
        boolean full = ready.checkFull();
        long wait = 0;
        boolean on;
        long backoff = guard.backoffNanos();
        if (backoff > 0) {
            on = false;
            wait = millisUntil(backoff);
        } else if (full) {
            on = false;
        } else if (pending.size() < handshakeCap()) {
            on = true;
        } else {
            long evictable = pending.evictableIn(now);
            on = evictable == 0;
            wait = on || evictable < 0 ? 0 : millisUntil(evictable);
        }
        if (on != accepting) {
            accepting = on;
            listener.keyFor(selector).interestOps(on ? SelectionKey.OP_ACCEPT : 0);
        }
        return wait;
    }

    /** Peers in handshake at most now. */
    private int handshakeCap() {
        return Math.min(maxHandshakes, descriptors.cap());
    }

    /**
     * Called by the guard when descriptors ran out: from now on hold {@link DescriptorPressure#HEADROOM} fewer peers
     * in handshake than now, and drop the peer silent longest if it may be; true if one was dropped (its descriptor
     * closed).
     */
    private boolean makeRoom() {
        long now = System.nanoTime();
        descriptors.outOfDescriptors(pending.size(), now);
        if (!pending.evictSilent(now, "the process was out of descriptors and another peer was waiting")) {
            return false;
        }
        try {
            pending.flush();
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    /** Takes waiting peers off the listen queue into handshake, as far as the limits allow. */
    private void acceptAll() throws IOException {
        try {
            for (int n = 0; n < ACCEPT_BATCH && !closed && ready.size() + done.size() < READY_MAX; n++) {
                long now = System.nanoTime();
                if (!roomForHandshake(now)) {
                    return;
                }
                SocketChannel c = guard.accept(acceptFrom);
                if (c == null) {
                    return;
                }
                admit(c, now);
            }
        } finally {
            // the peers whose handshakes ended on admission
            handOverDone();
        }
    }

    /** Whether a newcomer may handshake now, after dropping peers silent long enough where the handshakes are full. */
    private boolean roomForHandshake(long now) throws IOException {
        int cap = handshakeCap();
        while (pending.size() >= cap && pending.evictSilent(now, cap == maxHandshakes
                ? pending.size() + " peers were in handshake (maxHandshakes) and another was waiting"
                : "the process was near its descriptor limit and another peer was waiting")) {
            // dropped one
        }
        pending.flush();
        return pending.size() < cap;
    }

    /** Registers a newly accepted peer for its handshake; a failure drops that peer only. */
    private void admit(SocketChannel c, long now) {
        String peer = "unknown peer";
        try {
            peer = SocketIo.describe(c.getRemoteAddress());
            c.configureBlocking(false);
            c.setOption(StandardSocketOptions.TCP_NODELAY, true);
            long timeout = settings.handshakeTimeout() == 0 ? Settings.FOREVER : settings.handshakeTimeout();
            TlsSession tls = settings.tls() == null ? null : settings.tls().serverSession(peer);
            Handshake.Accepting hs = new Handshake.Accepting(now + timeout, peer, settings.secret(), tls,
                    settings.heartbeatBits());
            SelectionKey key = c.register(selector, SelectionKey.OP_READ, new PendingHandshakes.Pending(hs, now));
            pending.add(key);
            // a client sends its hello as its connect returns, so under load it has arrived by now: read it at
            // once, and a handshake that ends here never has the selector watch its socket (no epoll_ctl to add
            // it and to remove it, no wake-up); one read that finds nothing otherwise
            advance(key);
        } catch (Exception | Error e) {
            peerLog.warn("{}: dropped peer {}: {}", endpoint, peer, e.toString());
            SelectionKey key = c.keyFor(selector);
            if (key != null) {
                pending.forget(key);
            } else {
                closeQuietly(c);
            }
        }
    }

    /**
     * Reads and drops what a refused peer sent beyond its handshake and has arrived (a client's first bytes go with
     * its hello), at most {@link #DISCARD_MAX} bytes: closing a socket with unread input resets the connection, and a
     * client whose system drops received bytes on a reset (Windows does; Linux keeps them readable) would lose the
     * answer that tells it why it was refused. Bytes still on their way when the socket closes reset it anyway.
     */
    private void discardUnread(SocketChannel c) {
        try {
            for (int total = 0, n; total < DISCARD_MAX && (n = c.read(discard.clear())) > 0; ) {
                total += n;
            }
        } catch (IOException | RuntimeException ignored) {
            // the peer is being dropped either way
        }
    }

    static void closeQuietly(AutoCloseable c) {
        try {
            c.close();
        } catch (Exception e) {
            LOG.debug("close failed", e);
        }
    }
}
