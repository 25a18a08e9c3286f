package io.rdmacomm.rdma;

import io.rdmacomm.api.Endpoint;
import io.rdmacomm.api.EndpointOption;
import io.rdmacomm.api.HandshakeException;
import io.rdmacomm.api.Units;
import io.rdmacomm.api.auth.MutualAuthentication;
import io.rdmacomm.api.auth.SharedSecret;
import io.rdmacomm.api.support.AcceptGuard;
import io.rdmacomm.api.support.DescriptorBudget;
import io.rdmacomm.api.support.RateLimitedLog;
import io.rdmacomm.rdma.spi.RdmaChannel;
import io.rdmacomm.rdma.spi.RdmaNode;
import io.rdmacomm.rdma.spi.RdmaProvider;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.channels.ClosedSelectorException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The server side of the bootstrap: the endpoint's TCP port (the only one the engine opens) and one thread per
 * server ({@code rdmacomm-rdma-accept}) that accepts, reads each client's HELLO without blocking, authenticates the
 * client where the server has a shared secret ({@link MutualAuthentication} in AUTH frames; nothing of the HELLO
 * reaches the provider before that succeeded), answers it, connects the provider channel and completes the engine's
 * handshake over it, every step bounded by handshakeTimeout. Established connections go to {@link #ready} and their
 * sockets to the {@link BootstrapWatch}.
 *
 * <p>The thread does not die of a peer or of a flood: a peer that sends garbage, stays silent or fails (anything it
 * throws, up to an {@link Error}) is dropped alone, and a failure of a whole loop iteration is logged and the loop
 * goes on. Accepting goes through an {@link AcceptGuard}: a failed accept (out of descriptors: EMFILE) backs off
 * 5 ms..1 s with OP_ACCEPT interest off, refuses one waiting peer with a spare descriptor and drops the peer in
 * handshake silent longest (if past its grace of silence). At most maxHandshakes peers (fewer if the descriptor
 * limit does not leave room for them: {@link #handshakeSlots}) are between accept and ready; when that is full, a
 * newcomer replaces the peer silent longest if that is past its grace ({@link PendingPeer#NEVER_HEARD_NANOS} for
 * one that sent nothing, {@link PendingPeer#SILENT_NANOS} for one that stalled in its bootstrap), else the server
 * stops accepting until a slot frees and newcomers wait in the listen queue (backlog). Only peers the server waits
 * on are dropped for newcomers, never one whose provider channel is being connected ({@link PendingPeer}). Clients
 * are authenticated and their HELLOs checked by a {@link BootstrapAdmission}. Per-peer lines are rate-limited
 * ({@link RateLimitedLog}).
 */
final class BootstrapServer {
    private static final Logger LOG = LoggerFactory.getLogger(BootstrapServer.class);
    /** At most this share (1/n) of the descriptors left free goes to peers in handshake. */
    private static final int HANDSHAKE_SHARE = 4;
    /** How long the loop waits after an iteration failed as a whole, so a persistent failure cannot spin. */
    private static final long LOOP_FAILURE_PAUSE_NANOS = TimeUnit.MILLISECONDS.toNanos(10);

    private final Endpoint endpoint;
    private final RdmaProvider provider;
    private final ServerSocketChannel server;
    private final Selector selector;
    private final SelectionKey acceptKey;
    private final long timeoutNanos;
    /** Peers between accept and ready at once. */
    private final int maxHandshakes;
    /** Peer processes this server's node may hold connections from ({@code maxPeers}). */
    private final long maxPeers;
    /** Authenticates clients (where the server has a shared secret) and refuses HELLOs this server cannot serve. */
    private final BootstrapAdmission admission;
    private final AcceptGuard guard;
    private final RateLimitedLog peerLog = new RateLimitedLog(LOG);
    private final RateLimitedLog loopLog = new RateLimitedLog(LOG);
    private final Thread thread;
    /**
     * The provider's node for the bound interface, made as the server starts and held until it closes (null for a
     * wildcard bind, whose interface each connection names): the first client does not wait for the provider's
     * context and worker to be made, and the node outlives idle spells instead of being made again after each.
     */
    private RdmaNode standing;
    private final List<PendingPeer> channels = new ArrayList<>();
    private volatile boolean open = true;
    /** Peers dropped for a newcomer or for a descriptor, while the slots were full (for tests and statistics). */
    private volatile long evicted;
    final BlockingQueue<Connection> ready = new LinkedBlockingQueue<>();
    /** For tests: run at the start of each round and before each accept, to inject failures; null in use. */
    volatile Runnable faults;

    private BootstrapServer(Endpoint endpoint, RdmaProvider provider, ServerSocketChannel server, Selector selector,
            SelectionKey acceptKey, SharedSecret secret, int maxHandshakes) {
        this.endpoint = endpoint;
        this.admission = new BootstrapAdmission(endpoint, provider, secret);
        this.provider = provider;
        this.server = server;
        this.selector = selector;
        this.acceptKey = acceptKey;
        this.maxHandshakes = maxHandshakes;
        this.maxPeers = endpoint.size(EndpointOption.MAX_PEERS);
        this.timeoutNanos = endpoint.duration(EndpointOption.HANDSHAKE_TIMEOUT).toNanos();
        this.guard = new AcceptGuard(endpoint.toString(), LOG,
                (peer, reason) -> BootstrapFrame.writeTo(peer, new BootstrapRefuse(reason).encode()));
        this.thread = new Thread(this::run, "rdmacomm-rdma-accept");
        thread.setDaemon(true);
    }

    /** @throws IllegalArgumentException if the endpoint names a secret that cannot be loaded */
    static BootstrapServer open(Endpoint endpoint, RdmaProvider provider) throws IOException {
        SharedSecret secret = SharedSecret.of(endpoint).orElse(null);
        int backlog = endpoint.intSize(EndpointOption.BACKLOG);
        int requested = endpoint.intSize(EndpointOption.MAX_HANDSHAKES);
        if (backlog < 1 || requested < 1) {
            throw new IllegalArgumentException(endpoint + ": backlog (" + backlog + ") and maxHandshakes ("
                    + requested + ") must be at least 1");
        }
        ServerSocketChannel s = ServerSocketChannel.open();
        Selector sel = null;
        SelectionKey key;
        try {
            s.bind(endpoint.socketAddress(), backlog); // the kernel caps it at net.core.somaxconn
            s.configureBlocking(false);
            sel = Selector.open();
            key = s.register(sel, SelectionKey.OP_ACCEPT);
        } catch (IOException | RuntimeException e) {
            s.close();
            if (sel != null) {
                sel.close();
            }
            throw e;
        }
        long limit = DescriptorBudget.limit();
        int maxHandshakes = handshakeSlots(requested, limit, DescriptorBudget.inUse());
        if (maxHandshakes < requested) {
            LOG.info("{}: at most {} peers in handshake: maxHandshakes={} does not fit the descriptor limit {}"
                    + " (ulimit -n)", endpoint, maxHandshakes, requested, limit);
        }
        BootstrapServer b = new BootstrapServer(endpoint, provider, s, sel, key, secret, maxHandshakes);
        b.standing = standingNode(endpoint, provider, (InetSocketAddress) s.getLocalAddress());
        b.thread.start();
        return b;
    }

    /**
     * The node connections on {@code bound} will use, made now; null for a wildcard address, or if the provider
     * cannot make it (each connection then tries, and fails with the cause, as it would have without this).
     */
    private static RdmaNode standingNode(Endpoint endpoint, RdmaProvider provider, InetSocketAddress bound) {
        if (bound.getAddress().isAnyLocalAddress()) {
            return null;
        }
        try {
            return provider.node(bound.getAddress(), RdmaChannel.Role.PASSIVE,
                    RdmaCommunicator.trustsPeers(endpoint));
        } catch (Exception | Error e) { // NOPMD: as a connection's failure to make it drops that peer only
            LOG.warn("{}: the {} provider's node could not be made at start; each connection will try: {}", endpoint,
                    provider.name(), e.toString());
            return null;
        }
    }

    /**
     * Peers in handshake at once: {@code requested}, or a {@link #HANDSHAKE_SHARE 1/4} share of the descriptors
     * left free (less {@link DescriptorBudget#RESERVE}) if that is less, and at least 8; each holds one descriptor
     * (its socket) while the server waits on it.
     */
    static int handshakeSlots(int requested, long limit, long inUse) {
        if (limit < 0) {
            return requested;
        }
        long free = Math.max(0, limit - Math.max(0, inUse) - DescriptorBudget.RESERVE);
        return (int) Math.max(Math.min(8, requested), Math.min(requested, free / HANDSHAKE_SHARE));
    }

    int port() {
        return server.socket().getLocalPort();
    }

    /** Peers in handshake at most. */
    int maxHandshakes() {
        return maxHandshakes;
    }

    /** Peers dropped so far to make room (slots full, or out of descriptors). */
    long evicted() {
        return evicted;
    }

    private void run() {
        try {
            while (open) {
                try {
                    iterate();
                } catch (ClosedSelectorException e) {
                    if (open) {
                        LOG.error("{}: the bootstrap selector was closed while the server is open; no further"
                                + " connections", endpoint, e);
                    }
                    return;
                } catch (Throwable e) { // NOPMD: nothing may end this thread but close
                    if (!open) {
                        return;
                    }
                    loopLog.warn("{}: the accept loop failed, serving on: {}", endpoint, e.toString(), e);
                    LockSupport.parkNanos(LOOP_FAILURE_PAUSE_NANOS);
                }
            }
        } finally {
            for (PendingPeer p : channels) {
                drop(p, null);
            }
            channels.clear();
            guard.close();
        }
    }

    /** One round: accept interest as the slots and the guard allow, select, handle each ready peer, sweep. */
    private void iterate() throws IOException {
        injectFaults();
        long now = System.nanoTime();
        long wait = nextWakeNanos(now);
        boolean accepting = guard.backoffNanos() == 0;
        if (accepting && channels.size() >= maxHandshakes) {
            PendingPeer silent = PendingPeer.silentLongest(channels, now);
            long overdue = silent == null ? 0 : silent.overdue(now);
            accepting = silent != null && overdue >= 0;
            if (!accepting) {
                // no room, and nobody silent long enough to give way: newcomers wait in the listen queue
                wait = Math.min(wait, silent == null ? Long.MAX_VALUE : -overdue);
            }
        } else if (!accepting) {
            wait = Math.min(wait, guard.backoffNanos());
        }
        int interest = accepting ? SelectionKey.OP_ACCEPT : 0;
        if (acceptKey.interestOps() != interest) {
            acceptKey.interestOps(interest);
        }
        selector.select(wait == Long.MAX_VALUE ? 0 : Math.max(1, TimeUnit.NANOSECONDS.toMillis(wait) + 1));
        for (Iterator<SelectionKey> it = selector.selectedKeys().iterator(); it.hasNext();) {
            SelectionKey k = it.next();
            it.remove();
            if (!k.isValid()) {
                continue;
            }
            if (k == acceptKey) {
                if (k.isAcceptable()) {
                    acceptSome();
                }
            } else if (k.isReadable()) {
                readHello((PendingPeer) k.attachment(), k);
            }
        }
        sweep();
    }

    private void injectFaults() {
        Runnable f = faults;
        if (f != null) {
            f.run();
        }
    }

    /** Nanoseconds to the next handshake deadline; Long.MAX_VALUE if nobody is in handshake. */
    private long nextWakeNanos(long now) {
        long next = Long.MAX_VALUE;
        for (PendingPeer p : channels) {
            next = Math.min(next, Math.max(0, p.deadline - now));
        }
        return next;
    }

    /** Drops the peer silent longest if it is past its grace of silence. */
    private void evictSilent(String why) {
        long now = System.nanoTime();
        PendingPeer p = PendingPeer.evictable(channels, now);
        if (p != null) {
            channels.remove(p);
            evicted++;
            drop(p, new HandshakeException("silent for " + Units.formatDuration(Duration.ofMillis(TimeUnit.NANOSECONDS.toMillis(now - p.heard)))
                    + " in handshake, dropped " + why));
        }
    }

    /**
     * Accepts waiting peers while there is room (or a peer silent long enough to give way to a newcomer) and the
     * guard allows.
     */
    private void acceptSome() throws IOException {
        while (open) {
            boolean full = channels.size() >= maxHandshakes;
            if (full && PendingPeer.evictable(channels, System.nanoTime()) == null) {
                return;
            }
            injectFaults();
            long failures = guard.failures();
            SocketChannel s = guard.accept(server);
            if (s == null) {
                if (guard.failures() != failures) {
                    // the accept failed (out of descriptors, most likely): free one a silent peer holds
                    evictSilent("to free a descriptor after a failed accept");
                }
                return;
            }
            if (full) {
                evictSilent("for a newcomer: " + maxHandshakes + " peers in handshake (maxHandshakes)");
            }
            admit(s);
        }
    }

    private void admit(SocketChannel s) {
        String peer = describe(s);
        try {
            s.configureBlocking(false);
            s.socket().setTcpNoDelay(true);
            PendingPeer p = new PendingPeer(s, peer, System.nanoTime(), timeoutNanos);
            s.register(selector, SelectionKey.OP_READ, p);
            channels.add(p);
        } catch (Exception | Error e) { // NOPMD: one peer's failure drops that peer only
            peerLog.warn("{}: dropped peer {}: {}", endpoint, peer, e.toString());
            closeQuietly(s, peer);
        }
    }

    private void readHello(PendingPeer p, SelectionKey k) {
        p.heard = System.nanoTime();
        p.heardAny = true;
        try {
            if (!p.frame.readFrom(p.socket, p.peer)) {
                return;
            }
            if (p.auth != null) {
                k.cancel();
                admission.checkProof(p);
                answer(p, p.hello);
                return;
            }
            if (p.frame.type() != BootstrapFrame.HELLO) {
                throw new HandshakeException("bootstrap from " + p.peer + ": expected a HELLO (type 1), got type "
                        + p.frame.type());
            }
            BootstrapHello hello = BootstrapHello.decode(p.frame.body(), p.peer);
            if (!admission.challenge(p, hello)) {
                k.cancel();
                answer(p, hello);
            }
        } catch (Exception | Error e) { // NOPMD: one peer's failure drops that peer only
            channels.remove(p);
            drop(p, e);
        }
    }

    /** A valid HELLO: refuse it, or open the channel, connect it and welcome the client. */
    private void answer(PendingPeer p, BootstrapHello hello) throws IOException {
        String refusal = admission.refusal(hello);
        if (refusal != null) {
            BootstrapFrame.writeTo(p.socket, new BootstrapRefuse(refusal).encode());
            throw new HandshakeException("bootstrap from " + p.peer + ": refused: " + refusal);
        }
        int ring = Math.min(hello.ringSize(), endpoint.intSize(EndpointOption.RING_SIZE));
        InetSocketAddress local = (InetSocketAddress) p.socket.getLocalAddress();
        Connection c = new Connection(endpoint);
        p.connection = c;
        c.bootstrapSocket(p.socket);
        c.agreeRingSize(ring);
        RdmaNode node = provider.node(local.getAddress(), RdmaChannel.Role.PASSIVE,
                RdmaCommunicator.trustsPeers(endpoint));
        String full = peersFull(node, hello.nodeAddress());
        if (full != null) {
            node.close();
            BootstrapFrame.writeTo(p.socket, new BootstrapRefuse(full).encode());
            throw new HandshakeException("bootstrap from " + p.peer + ": refused: " + full);
        }
        RdmaChannel ch;
        try {
            ch = node.newChannel(p.peer, c);
        } catch (IOException | RuntimeException e) {
            node.close();
            throw e;
        }
        c.attach(ch, node);
        c.watch(selector::wakeup);
        ch.connect(hello.nodeAddress(), hello.channelId(), RdmaChannel.Role.PASSIVE, p.deadline);
        int flags = ch.boundsEnforcedByTransport() ? BootstrapWelcome.FLAG_BOUNDS_ENFORCED : 0;
        if (!BootstrapFrame.writeTo(p.socket, new BootstrapWelcome(flags, node.address(), ch.localId(), ring)
                .encode())) {
            throw new HandshakeException("bootstrap with " + p.peer + ": the peer does not read its WELCOME");
        }
        c.watchBootstrapSocket();
    }

    /**
     * Why a connection from the node at {@code peerAddress} is refused: it would be a peer process past
     * {@code maxPeers} (one whose transport connection the node does not hold yet); null if it is not.
     */
    private String peersFull(RdmaNode node, byte[] peerAddress) {
        int peers = node.peers();
        if (peers < 0 || peers < maxPeers || node.reaches(peerAddress)) {
            return null;
        }
        return "this server holds connections from " + peers + (peers == 1 ? " peer process" : " peer processes")
                + ", its limit (maxPeers=" + maxPeers + "; servercomm and kv-server set it to what their descriptor"
                + " limit holds): connect from a process it serves already, or later";
    }

    /** Completes connections whose engine HELLO arrived; drops those past their deadline. */
    private void sweep() {
        long now = System.nanoTime();
        for (Iterator<PendingPeer> it = channels.iterator(); it.hasNext();) {
            PendingPeer p = it.next();
            Connection c = p.connection;
            if (c != null && c.helloArrived()) {
                it.remove();
                c.watch(null);
                try {
                    c.serverHandshake();
                    ready.add(c);
                } catch (Exception | Error e) { // NOPMD: one peer's failure drops that peer only
                    drop(p, e);
                }
            } else if (now - p.deadline >= 0) {
                it.remove();
                drop(p, new HandshakeException("no handshake within "
                        + Units.formatDuration(Duration.ofNanos(timeoutNanos)) + " (handshakeTimeout)"));
            }
        }
    }

    /** Closes what {@code p} holds; never throws. */
    private void drop(PendingPeer p, Throwable why) {
        if (why != null) {
            peerLog.warn("{}: dropped peer {}: {}", endpoint, p.peer, String.valueOf(why.getMessage()));
        }
        if (p.connection != null) {
            try {
                p.connection.close();
            } catch (RuntimeException | Error e) { // NOPMD: closing one peer must not end the thread
                LOG.debug("closing the connection of {}: {}", p.peer, e.toString());
            }
        }
        closeQuietly(p.socket, p.peer);
    }

    private static void closeQuietly(SocketChannel s, String peer) {
        try {
            s.close();
        } catch (IOException | RuntimeException e) {
            LOG.debug("closing the socket of {}: {}", peer, e.toString());
        }
    }

    private static String describe(SocketChannel s) {
        try {
            InetSocketAddress a = (InetSocketAddress) s.getRemoteAddress();
            return a.getAddress().getHostAddress() + ":" + a.getPort();
        } catch (IOException | RuntimeException e) {
            return "unknown peer";
        }
    }

    /** Stops accepting and drops every connection not handed out yet. */
    void close() {
        open = false;
        selector.wakeup();
        try {
            thread.join(TimeUnit.SECONDS.toMillis(5));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (thread.isAlive()) {
            LOG.warn("{}: accept thread did not stop within 5 s", endpoint);
        }
        try {
            server.close();
            selector.close();
        } catch (IOException e) {
            LOG.debug("{}: closing the bootstrap port: {}", endpoint, e.toString());
        }
        for (Connection r; (r = ready.poll()) != null;) {
            r.close();
        }
        if (standing != null) {
            standing.close();
            standing = null;
        }
    }
}
