package io.rdmacomm.rdma;

import io.rdmacomm.api.Endpoint;
import io.rdmacomm.api.EndpointOption;
import io.rdmacomm.api.HandshakeException;
import io.rdmacomm.api.Units;
import io.rdmacomm.api.auth.AuthenticationException;
import io.rdmacomm.api.auth.MutualAuthentication;
import io.rdmacomm.api.auth.SharedSecret;
import io.rdmacomm.rdma.spi.RdmaChannel;
import io.rdmacomm.rdma.spi.RdmaNode;
import io.rdmacomm.rdma.spi.RdmaProvider;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
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
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The server side of the bootstrap: the endpoint's TCP port (the only one the engine opens) and one thread per
 * server ({@code rdmacomm-rdma-accept}) that accepts, reads each client's HELLO without blocking, authenticates the
 * client where the server has a shared secret ({@link MutualAuthentication} in AUTH frames; nothing of the HELLO
 * reaches the provider before that succeeded), answers it, connects the provider channel and completes the engine's
 * handshake over it, every step bounded by handshakeTimeout. A peer that sends garbage, stays silent or fails is logged and dropped; the server serves on.
 * Established connections go to {@link #ready} and their sockets to the {@link BootstrapWatch}.
 */
final class BootstrapServer {
    private static final Logger LOG = LoggerFactory.getLogger(BootstrapServer.class);

    private final Endpoint endpoint;
    private final RdmaProvider provider;
    private final ServerSocketChannel server;
    private final Selector selector;
    private final long timeoutNanos;
    /** The server's shared secret, or null when it authenticates nobody. */
    private final SharedSecret secret;
    private final Thread thread;
    private final List<Pending> channels = new ArrayList<>();
    private volatile boolean open = true;
    final BlockingQueue<Connection> ready = new LinkedBlockingQueue<>();

    /** One client between accept and ready: reading its HELLO ({@code connection} null), then awaiting the engine's. */
    private static final class Pending {
        final SocketChannel socket;
        final String peer;
        final long deadline;
        BootstrapFrame frame = new BootstrapFrame();
        /** Set once the HELLO arrived while the client's proof is awaited. */
        BootstrapHello hello;
        MutualAuthentication.Server auth;
        Connection connection;

        Pending(SocketChannel socket, String peer, long deadline) {
            this.socket = socket;
            this.peer = peer;
            this.deadline = deadline;
        }
    }

    private BootstrapServer(Endpoint endpoint, RdmaProvider provider, ServerSocketChannel server, Selector selector,
            SharedSecret secret) {
        this.endpoint = endpoint;
        this.secret = secret;
        this.provider = provider;
        this.server = server;
        this.selector = selector;
        this.timeoutNanos = endpoint.duration(EndpointOption.HANDSHAKE_TIMEOUT).toNanos();
        this.thread = new Thread(this::run, "rdmacomm-rdma-accept");
        thread.setDaemon(true);
    }

    /** @throws IllegalArgumentException if the endpoint names a secret that cannot be loaded */
    static BootstrapServer open(Endpoint endpoint, RdmaProvider provider) throws IOException {
        SharedSecret secret = SharedSecret.of(endpoint).orElse(null);
        ServerSocketChannel s = ServerSocketChannel.open();
        Selector sel = null;
        try {
            s.bind(endpoint.socketAddress(), 1024);
            s.configureBlocking(false);
            sel = Selector.open();
            s.register(sel, SelectionKey.OP_ACCEPT);
        } catch (IOException | RuntimeException e) {
            s.close();
            if (sel != null) {
                sel.close();
            }
            throw e;
        }
        BootstrapServer b = new BootstrapServer(endpoint, provider, s, sel, secret);
        b.thread.start();
        return b;
    }

    int port() {
        return server.socket().getLocalPort();
    }

    private void run() {
        try {
            while (open) {
                selector.select(nextWakeMillis());
                for (SelectionKey k : selector.selectedKeys()) {
                    if (k.isValid() && k.isAcceptable()) {
                        acceptAll();
                    } else if (k.isValid() && k.isReadable()) {
                        readHello((Pending) k.attachment(), k);
                    }
                }
                selector.selectedKeys().clear();
                sweep();
            }
        } catch (IOException | RuntimeException e) {
            if (open) {
                LOG.error("{}: the accept thread failed; no further connections", endpoint, e);
            }
        } finally {
            for (Pending p : channels) {
                drop(p, null);
            }
            channels.clear();
        }
    }

    private long nextWakeMillis() {
        long next = Long.MAX_VALUE;
        long now = System.nanoTime();
        for (Pending p : channels) {
            next = Math.min(next, p.deadline - now);
        }
        return next == Long.MAX_VALUE ? 0 : Math.max(1, TimeUnit.NANOSECONDS.toMillis(next) + 1);
    }

    private void acceptAll() throws IOException {
        for (SocketChannel s; (s = server.accept()) != null;) {
            String peer = describe(s);
            try {
                s.configureBlocking(false);
                s.socket().setTcpNoDelay(true);
                Pending p = new Pending(s, peer, System.nanoTime() + timeoutNanos);
                s.register(selector, SelectionKey.OP_READ, p);
                channels.add(p);
            } catch (IOException e) {
                LOG.warn("{}: dropped peer {}: {}", endpoint, peer, e.getMessage());
                s.close();
            }
        }
    }

    private void readHello(Pending p, SelectionKey k) {
        try {
            if (!p.frame.readFrom(p.socket, p.peer)) {
                return;
            }
            if (p.auth != null) {
                k.cancel();
                checkProof(p);
                answer(p, p.hello);
                return;
            }
            if (p.frame.type() != BootstrapFrame.HELLO) {
                throw new HandshakeException("bootstrap from " + p.peer + ": expected a HELLO (type 1), got type "
                        + p.frame.type());
            }
            BootstrapHello hello = BootstrapHello.decode(p.frame.body(), p.peer);
            if (!challenge(p, hello)) {
                k.cancel();
                answer(p, hello);
            }
        } catch (IOException | RuntimeException e) {
            channels.remove(p);
            drop(p, e);
        }
    }

    /**
     * Starts authenticating {@code p} if this server has a secret: sends the challenge and returns true (the proof
     * is read next); false if there is nothing to authenticate. Refuses a client whose offer does not match.
     */
    private boolean challenge(Pending p, BootstrapHello hello) throws IOException {
        boolean offered = (hello.flags() & BootstrapFrame.FLAG_AUTHENTICATION) != 0;
        if (secret != null && !offered) {
            BootstrapFrame.writeTo(p.socket, new BootstrapRefuse("this server requires authentication",
                    BootstrapRefuse.AUTH_REQUIRED).encode());
            throw AuthenticationException.notOfferedBy(p.peer);
        }
        if (secret == null && offered) {
            BootstrapFrame.writeTo(p.socket, new BootstrapRefuse("this server has no shared secret",
                    BootstrapRefuse.NO_SECRET).encode());
            throw AuthenticationException.offeredWithoutSecret(p.peer);
        }
        if (secret == null) {
            return false;
        }
        p.hello = hello;
        p.auth = new MutualAuthentication.Server(secret, p.peer);
        p.frame = new BootstrapFrame();
        if (!BootstrapFrame.writeTo(p.socket, BootstrapFrame.frame(BootstrapFrame.AUTH,
                ByteBuffer.wrap(p.auth.challenge())))) {
            throw new HandshakeException("bootstrap with " + p.peer + ": the peer does not read its challenge");
        }
        return true;
    }

    /** The client's proof arrived: answered either way; throws if it was wrong (the client has been told). */
    private void checkProof(Pending p) throws IOException {
        if (p.frame.type() != BootstrapFrame.AUTH || p.frame.body().remaining() != MutualAuthentication.PROOF_BYTES) {
            throw new HandshakeException("bootstrap from " + p.peer + ": expected an AUTH proof of "
                    + MutualAuthentication.PROOF_BYTES + " bytes, got type " + p.frame.type() + " with "
                    + p.frame.body().remaining() + " bytes");
        }
        byte[] proof = new byte[MutualAuthentication.PROOF_BYTES];
        p.frame.body().get(proof);
        BootstrapFrame.writeTo(p.socket, BootstrapFrame.frame(BootstrapFrame.AUTH,
                ByteBuffer.wrap(p.auth.answer(proof))));
        p.auth.checkAccepted();
    }

    /** A valid HELLO: refuse it, or open the channel, connect it and welcome the client. */
    private void answer(Pending p, BootstrapHello hello) throws IOException {
        String refusal = refusal(hello);
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
        RdmaNode node = provider.node(local.getAddress(), RdmaChannel.Role.PASSIVE);
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

    private String refusal(BootstrapHello hello) {
        // same name, or (peers that send it) the same wire family: ucx-jucx and ucx-ffm speak one UCX wire format
        if (!hello.provider().equals(provider.name()) && !provider.wireFamily().equals(hello.family())) {
            return "provider " + hello.provider() + " asked for, this server runs " + provider.name() + " ("
                    + (hello.family() == null ? "the client names no wire family, so only " + provider.name()
                            + " would do" : "wire family " + hello.family() + ", this server's is "
                            + provider.wireFamily() + ": they cannot talk to each other") + ")";
        }
        if ((hello.flags() & ~BootstrapFrame.FLAG_AUTHENTICATION) != 0) {
            return "flags 0x" + Integer.toHexString(hello.flags()) + " not supported";
        }
        return null;
    }

    /** Completes connections whose engine HELLO arrived; drops those past their deadline. */
    private void sweep() {
        long now = System.nanoTime();
        for (Iterator<Pending> it = channels.iterator(); it.hasNext();) {
            Pending p = it.next();
            Connection c = p.connection;
            if (c != null && c.helloArrived()) {
                it.remove();
                c.watch(null);
                try {
                    c.serverHandshake();
                    ready.add(c);
                } catch (IOException | RuntimeException e) {
                    drop(p, e);
                }
            } else if (now - p.deadline >= 0) {
                it.remove();
                drop(p, new HandshakeException("no handshake within "
                        + Units.formatDuration(Duration.ofNanos(timeoutNanos)) + " (handshakeTimeout)"));
            }
        }
    }

    private void drop(Pending p, Exception why) {
        if (why != null) {
            LOG.warn("{}: dropped peer {}: {}", endpoint, p.peer, why.getMessage());
        }
        if (p.connection != null) {
            p.connection.close();
        }
        try {
            p.socket.close();
        } catch (IOException e) {
            LOG.debug("closing the socket of {}: {}", p.peer, e.toString());
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
    }
}
