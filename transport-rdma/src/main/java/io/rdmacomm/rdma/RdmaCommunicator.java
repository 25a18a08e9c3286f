package io.rdmacomm.rdma;

import io.rdmacomm.api.Access;
import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.Endpoint;
import io.rdmacomm.api.EndpointOption;
import io.rdmacomm.api.MemoryRegion;
import io.rdmacomm.api.RegionDescriptor;
import io.rdmacomm.api.Units;
import io.rdmacomm.api.HandshakeException;
import io.rdmacomm.api.auth.AuthenticationException;
import io.rdmacomm.api.auth.MutualAuthentication;
import io.rdmacomm.api.auth.SharedSecret;
import io.rdmacomm.rdma.spi.RdmaChannel;
import io.rdmacomm.rdma.spi.RdmaNode;
import io.rdmacomm.rdma.spi.RdmaProvider;
import io.rdmacomm.api.support.AbstractCommunicator;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.io.UncheckedIOException;
import java.net.ConnectException;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.channels.AsynchronousCloseException;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * An {@code rdma://} communicator. Differences from the contract: {@link #sync()} returns once the bytes are
 * placed in the peer's registered memory; a server completes handshakes on its own thread
 * ({@code rdmacomm-rdma-accept}, see {@link BootstrapServer}), so a client's {@code connect()} does not wait for
 * {@code accept()}.
 */
public final class RdmaCommunicator extends AbstractCommunicator<Connection> {
    private static final long ACCEPT_SLICE_NANOS = TimeUnit.MILLISECONDS.toNanos(50);

    private final RdmaProvider provider;
    private volatile BootstrapServer bootstrap;

    RdmaCommunicator(Endpoint endpoint, RdmaProvider provider) {
        super(endpoint);
        this.provider = provider;
    }

    private RdmaCommunicator(Endpoint serverEndpoint, RdmaProvider provider, Connection accepted) {
        super(serverEndpoint, accepted);
        this.provider = provider;
    }

    @Override
    protected Endpoint listen() throws IOException {
        BootstrapServer b;
        try {
            b = BootstrapServer.open(endpoint(), provider);
        } catch (IOException e) {
            throw new IOException("cannot serve " + endpoint() + ": " + e.getMessage(), e);
        }
        bootstrap = b;
        return endpoint().withPort(b.port());
    }

    /** The bootstrap server of a serving communicator (null before it serves), for tests. */
    BootstrapServer bootstrapServer() {
        return bootstrap;
    }

    @Override
    protected Communicator acceptNext() throws IOException {
        Duration timeout = endpoint().duration(EndpointOption.ACCEPT_TIMEOUT);
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            long wait = ACCEPT_SLICE_NANOS;
            if (!timeout.isZero()) {
                wait = Math.min(wait, deadline - System.nanoTime());
                if (wait <= 0) {
                    throw new SocketTimeoutException("accept on " + endpoint() + " timed out after "
                            + Units.formatDuration(timeout));
                }
            }
            Connection c;
            try {
                c = bootstrap.ready.poll(wait, TimeUnit.NANOSECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new InterruptedIOException("accept on " + endpoint() + " interrupted");
            }
            if (!isOpen()) {
                if (c != null) {
                    c.close();
                }
                throw new AsynchronousCloseException();
            }
            if (c != null) {
                return new RdmaCommunicator(endpoint(), provider, c);
            }
        }
    }

    /**
     * The client side of the bootstrap: TCP connect, HELLO, WELCOME or REFUSE, then the provider channel and the
     * engine's handshake over it, all within connectTimeout.
     */
    @Override
    protected Connection dial() throws IOException {
        Duration timeout = endpoint().duration(EndpointOption.CONNECT_TIMEOUT);
        long deadline = System.nanoTime() + timeout.toNanos();
        String peer = endpoint().authority();
        SharedSecret secret = SharedSecret.of(endpoint()).orElse(null);
        Connection c = new Connection(endpoint());
        SocketChannel socket = SocketChannel.open();
        c.bootstrapSocket(socket);
        abortDialWith(c::close);
        try {
            // the node first: making one (a UCP context on a cold JVM) can take seconds, which must not come out of
            // the server's handshakeTimeout, counted from its accept
            RdmaNode node = provider.node(localAddressTowards(endpoint().socketAddress()), RdmaChannel.Role.ACTIVE,
                    trustsPeers(endpoint()));
            RdmaChannel ch;
            try {
                ch = node.newChannel(peer, c);
            } catch (IOException | RuntimeException e) {
                node.close();
                throw e;
            }
            c.attach(ch, node);
            try {
                socket.socket().connect(endpoint().socketAddress(),
                        (int) Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
            } catch (ConnectException e) {
                ConnectException named = new ConnectException("connect to " + endpoint() + " failed: "
                        + e.getMessage());
                named.initCause(e);
                throw named;
            }
            socket.socket().setTcpNoDelay(true);
            int ringSize = endpoint().intSize(EndpointOption.RING_SIZE);
            ByteBuffer hello = new BootstrapHello(provider.name(), provider.wireFamily(), secret == null ? 0
                    : BootstrapFrame.FLAG_AUTHENTICATION, node.address(), ch.localId(), ringSize,
                    trustsPeers(endpoint())).encode();
            while (hello.hasRemaining()) {
                socket.write(hello);
            }
            if (secret != null) {
                MutualAuthentication.prove(secret, new AuthFrames(socket, deadline, peer), peer);
            }
            BootstrapWelcome w = welcome(socket, deadline, peer, ringSize);
            c.agreeRingSize(w.ringSize());
            c.watchBootstrapSocket();
            ch.connect(w.nodeAddress(), w.channelId(), RdmaChannel.Role.ACTIVE, deadline);
            c.clientHandshake(deadline);
            return c;
        } catch (SocketTimeoutException e) {
            c.close();
            SocketTimeoutException named = new SocketTimeoutException("connect to " + endpoint()
                    + " timed out after " + Units.formatDuration(timeout) + " (" + e.getMessage() + ")");
            named.initCause(e);
            throw named;
        } catch (IOException | RuntimeException e) {
            c.close();
            throw e;
        }
    }

    /**
     * The local address the system routes {@code peer} from (a connected UDP socket sends nothing), for the
     * client's node; the wildcard address if there is no route. Remembered per peer address for
     * {@link #ROUTE_MEMORY_NANOS}: asking costs a socket, and a client that connects often asks for the same peer.
     */
    private static InetAddress localAddressTowards(InetSocketAddress peer) {
        long now = System.nanoTime();
        InetAddress to = peer.getAddress();
        Route r = to == null ? null : ROUTES.get(to);
        if (r != null && now - r.asked() < ROUTE_MEMORY_NANOS) {
            return r.local();
        }
        InetAddress local;
        try (DatagramSocket probe = new DatagramSocket()) {
            probe.connect(peer);
            local = probe.getLocalAddress();
        } catch (IOException | UncheckedIOException e) {
            local = new InetSocketAddress(0).getAddress();
        }
        if (ROUTES.size() >= MAX_ROUTES) {
            ROUTES.clear();
        }
        if (to != null) {
            ROUTES.put(to, new Route(local, now));
        }
        return local;
    }

    /** How long a route asked for is used again: a change of routes is seen within this. */
    private static final long ROUTE_MEMORY_NANOS = TimeUnit.SECONDS.toNanos(1);
    private static final int MAX_ROUTES = 1024;
    private static final Map<InetAddress, Route> ROUTES = new ConcurrentHashMap<>();

    private record Route(InetAddress local, long asked) {
    }

    /** Whether {@code endpoint} says oneSided=trusted: its node gives peers one-sided access on every transport. */
    static boolean trustsPeers(Endpoint endpoint) {
        return "trusted".equals(endpoint.string(EndpointOption.ONE_SIDED));
    }

    /** The client's side of {@link MutualAuthentication} in AUTH frames; a REFUSE instead ends it with its reason. */
    private record AuthFrames(SocketChannel socket, long deadline, String where)
            implements MutualAuthentication.Exchange {
        @Override
        public void send(byte[] bytes) throws IOException {
            ByteBuffer f = BootstrapFrame.frame(BootstrapFrame.AUTH, ByteBuffer.wrap(bytes));
            while (f.hasRemaining()) {
                socket.write(f);
            }
        }

        @Override
        public byte[] receive(int n) throws IOException {
            BootstrapFrame f = new BootstrapFrame();
            f.readBy(socket, deadline, where, "connectTimeout");
            if (f.type() == BootstrapFrame.REFUSE) {
                throw refused(BootstrapRefuse.decode(f.body(), where), where);
            }
            if (f.type() != BootstrapFrame.AUTH || f.body().remaining() != n) {
                throw new HandshakeException("bootstrap from " + where + ": expected an AUTH message of " + n
                        + " bytes, got type " + f.type() + " with " + f.body().remaining() + " bytes");
            }
            byte[] b = new byte[n];
            f.body().get(b);
            return b;
        }
    }

    /** The exception for a server's REFUSE: an authentication mismatch says what to do about it. */
    private static IOException refused(BootstrapRefuse r, String peer) {
        return switch (r.code()) {
            case BootstrapRefuse.AUTH_REQUIRED -> AuthenticationException.requiredBy("server " + peer);
            case BootstrapRefuse.NO_SECRET -> AuthenticationException.noSecretAt("server " + peer);
            default -> new HandshakeException("server " + peer + " refused the connection: " + r.reason());
        };
    }

    /** Reads the server's answer: a WELCOME with a ring no larger than asked for, or the reason of a REFUSE. */
    private static BootstrapWelcome welcome(SocketChannel socket, long deadline, String peer, int ringSize)
            throws IOException {
        BootstrapFrame f = new BootstrapFrame();
        f.readBy(socket, deadline, peer, "connectTimeout");
        switch (f.type()) {
            case BootstrapFrame.WELCOME -> {
                BootstrapWelcome w = BootstrapWelcome.decode(f.body(), peer);
                if (w.ringSize() > ringSize) {
                    throw new HandshakeException("bootstrap WELCOME from " + peer + ": ring size " + w.ringSize()
                            + ", more than the " + ringSize + " asked for");
                }
                return w;
            }
            case BootstrapFrame.REFUSE -> throw refused(BootstrapRefuse.decode(f.body(), peer), peer);
            default -> throw new HandshakeException("bootstrap from " + peer + ": expected WELCOME or REFUSE, got"
                    + " type " + f.type());
        }
    }

    @Override
    protected void stopServing() {
        bootstrap.close();
    }

    /** The RDMA provider this communicator runs on ({@code ucx-ffm}, {@code ucx-jucx}, {@code verbs}). */
    public String providerName() {
        return provider.name();
    }

    /** This connection's counters; zero for a communicator that is not connected. */
    public RdmaStatistics statistics() {
        Connection c = link();
        return c == null ? new RdmaStatistics(0, 0, false)
                : new RdmaStatistics(c.registeredBytes(), c.zeroCopyBytes(), c.peerRingMapped());
    }
}
