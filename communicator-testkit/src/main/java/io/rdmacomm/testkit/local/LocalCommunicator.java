package io.rdmacomm.testkit.local;

import io.rdmacomm.api.Access;
import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.Endpoint;
import io.rdmacomm.api.EndpointOption;
import io.rdmacomm.api.HandshakeException;
import io.rdmacomm.api.MemoryRegion;
import io.rdmacomm.api.RegionDescriptor;
import io.rdmacomm.api.RemoteAccessException;
import java.io.IOException;
import java.net.ConnectException;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.AsynchronousCloseException;
import java.nio.channels.ByteChannel;
import java.nio.channels.ClosedChannelException;
import java.util.HexFormat;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@code local://name} transport: an in-process communicator for tests of code that embeds one. A server
 * registers its name in a JVM-wide registry; a connection is two bounded pipes, each holding
 * {@code sendBuffer} bytes, so a writer blocks while its reader lags and nothing is lost. {@link #sync()}
 * returns at once because written bytes are already readable by the peer. One-sided operations run in the
 * calling thread against the peer's registered buffers. No thread is started.
 *
 * <p>Connections begin with the same kind of handshake as the network transports (a magic number and a
 * version, big-endian), answered by {@link #accept()}; {@link #connectRaw(Endpoint)} opens a connection that
 * skips it, so tests can send a server arbitrary bytes.
 */
public final class LocalCommunicator implements Communicator {
    private static final Logger LOG = LoggerFactory.getLogger(LocalCommunicator.class);
    /** 'RLOC'. */
    static final int MAGIC = 0x524C4F43;
    static final short VERSION = 1;
    static final int HELLO_BYTES = 6;
    private static final AtomicLong CONNECTIONS = new AtomicLong();

    private enum Role { NEW, SERVING, CONNECTED }

    private final Object stateLock = new Object();
    private volatile Endpoint endpoint;
    private volatile Role role = Role.NEW;
    private volatile boolean closed;
    private Listener listener;
    private volatile Half half;

    LocalCommunicator(Endpoint endpoint) {
        this.endpoint = Objects.requireNonNull(endpoint, "endpoint");
    }

    private LocalCommunicator(Endpoint serverEndpoint, Half accepted) {
        this.endpoint = serverEndpoint;
        this.half = accepted;
        this.role = Role.CONNECTED;
    }

    /**
     * Connects to a served {@code local://} name at the transport level only, without the handshake: the
     * returned channel writes straight into what the server's {@code accept()} reads. For tests that feed a
     * server bytes that are not this protocol.
     *
     * @throws ConnectException if nothing serves the name
     */
    public static ByteChannel connectRaw(Endpoint endpoint) throws IOException {
        Half client = enqueue(endpoint);
        return new RawChannel(client, "raw connection to " + endpoint);
    }

    @Override
    public Endpoint endpoint() {
        return endpoint;
    }

    @Override
    public String peerName() {
        Half h = half;
        return h == null ? "unconnected" : h.peer().label;
    }

    @Override
    public void serve() throws IOException {
        synchronized (stateLock) {
            ensureOpen();
            if (role != Role.NEW) {
                throw new IllegalStateException(endpoint + " already " + describe(role));
            }
            listener = Listener.bind(endpoint);
            role = Role.SERVING;
        }
    }

    @Override
    public Communicator accept() throws IOException {
        Listener l;
        synchronized (stateLock) {
            ensureOpen();
            if (role != Role.SERVING) {
                throw new IllegalStateException("accept() on " + endpoint + " before serve()");
            }
            l = listener;
        }
        long acceptTimeout = endpoint.duration(EndpointOption.ACCEPT_TIMEOUT).toNanos();
        long deadline = System.nanoTime() + acceptTimeout;
        while (true) {
            Half h = l.take(acceptTimeout, deadline);
            try {
                answerHandshake(h);
                return new LocalCommunicator(endpoint, h);
            } catch (HandshakeException e) {
                LOG.warn("{}: dropped {}: {}", endpoint, h.peer().label, e.getMessage());
                h.close();
            } catch (IOException e) {
                LOG.debug("{}: {} went away during the handshake: {}", endpoint, h.peer().label, e.toString());
                h.close();
            }
            if (closed) {
                throw new AsynchronousCloseException();
            }
        }
    }

    private void answerHandshake(Half h) throws IOException {
        ByteBuffer hello = ByteBuffer.allocate(HELLO_BYTES);
        long timeout = endpoint.duration(EndpointOption.HANDSHAKE_TIMEOUT).toNanos();
        long deadline = System.nanoTime() + timeout;
        String what = "handshake from " + h.peer().label + " on " + endpoint;
        while (hello.hasRemaining()) {
            long left = timeout == 0 ? 0 : Math.max(1, deadline - System.nanoTime());
            int n;
            try {
                n = h.in.read(hello, left, what);
            } catch (SocketTimeoutException e) {
                throw new HandshakeException(what + ": silent for " + TimeUnit.NANOSECONDS.toMillis(timeout)
                        + " ms (handshakeTimeout), " + hello.position() + " of " + HELLO_BYTES + " bytes arrived");
            }
            if (n < 0) {
                throw new HandshakeException(what + ": connection closed after " + hello.position() + " of "
                        + HELLO_BYTES + " bytes");
            }
        }
        hello.flip();
        checkHello(hello, what);
        h.out.write(hello(), 0, what);
    }

    static void checkHello(ByteBuffer hello, String what) throws HandshakeException {
        int magic = hello.getInt(0);
        short version = hello.getShort(4);
        if (magic != MAGIC) {
            throw new HandshakeException(what + ": expected magic 0x" + Integer.toHexString(MAGIC) + " ('RLOC'),"
                    + " got bytes " + HexFormat.of().formatHex(hello.array(), 0, HELLO_BYTES));
        }
        if (version != VERSION) {
            throw new HandshakeException(what + ": expected protocol version " + VERSION + ", got " + version);
        }
    }

    static ByteBuffer hello() {
        return ByteBuffer.allocate(HELLO_BYTES).order(ByteOrder.BIG_ENDIAN).putInt(MAGIC).putShort(VERSION).flip();
    }

    @Override
    public void connect() throws IOException {
        synchronized (stateLock) {
            ensureOpen();
            if (role != Role.NEW) {
                throw new IllegalStateException(endpoint + " already " + describe(role));
            }
            role = Role.CONNECTED;
        }
        long timeout = endpoint.duration(EndpointOption.CONNECT_TIMEOUT).toNanos();
        long deadline = System.nanoTime() + timeout;
        Half h;
        try {
            h = enqueue(endpoint);
        } catch (ConnectException e) {
            role = Role.NEW;
            throw e;
        }
        half = h;
        if (closed) {
            h.close();
            throw new AsynchronousCloseException();
        }
        String what = "connect to " + endpoint;
        try {
            h.out.write(hello(), 0, what);
            ByteBuffer reply = ByteBuffer.allocate(HELLO_BYTES);
            while (reply.hasRemaining()) {
                long left = timeout == 0 ? 0 : deadline - System.nanoTime();
                if (timeout != 0 && left <= 0) {
                    throw new SocketTimeoutException(what + " timed out after "
                            + TimeUnit.NANOSECONDS.toMillis(timeout) + " ms (connectTimeout): the server did not"
                            + " answer the handshake");
                }
                int n;
                try {
                    n = h.in.read(reply, left, what);
                } catch (SocketTimeoutException e) {
                    throw new SocketTimeoutException(what + " timed out after "
                            + TimeUnit.NANOSECONDS.toMillis(timeout) + " ms (connectTimeout): the server did not"
                            + " answer the handshake");
                }
                if (n < 0) {
                    throw new ConnectException(what + ": the server closed the connection during the handshake");
                }
            }
            reply.flip();
            checkHello(reply, what + ": handshake reply");
        } catch (IOException | RuntimeException e) {
            h.close();
            half = null;
            role = Role.NEW;
            throw e;
        }
    }

    /** Creates a connection to the server of {@code target} and queues the server's end in its backlog. */
    private static Half enqueue(Endpoint target) throws ConnectException {
        Listener l = Listener.lookup(target.host());
        if (l == null) {
            throw new ConnectException("connection refused: nothing serves " + target + " in this JVM");
        }
        long n = CONNECTIONS.incrementAndGet();
        Endpoint server = l.endpoint();
        // Each pipe holds at least a whole hello, so neither side's handshake write can block.
        Half[] ends = Half.link(Math.max(HELLO_BYTES, target.intSize(EndpointOption.SEND_BUFFER)),
                Math.max(HELLO_BYTES, server.intSize(EndpointOption.SEND_BUFFER)),
                target.size(EndpointOption.MAX_REGISTERED), server.size(EndpointOption.MAX_REGISTERED),
                "local-client#" + n, server.host() + "#" + n);
        if (!l.offer(ends[1])) {
            throw new ConnectException("connection refused: " + target + " closed");
        }
        return ends[0];
    }

    @Override
    public int read(ByteBuffer dst) throws IOException {
        Half h = connected();
        return h.in.read(dst, endpoint.duration(EndpointOption.READ_TIMEOUT).toNanos(),
                "read from " + h.peer().label + " on " + endpoint);
    }

    @Override
    public void write(ByteBuffer src) throws IOException {
        Half h = connected();
        h.out.write(src, endpoint.duration(EndpointOption.READ_TIMEOUT).toNanos(),
                "write to " + h.peer().label + " on " + endpoint);
    }

    @Override
    public void sync() throws IOException {
        Half h = connected();
        // bytes the peer read before it closed were delivered; only bytes it dropped unread make sync fail
        if (h.out.undeliverable()) {
            throw new IOException("sync to " + h.peer().label + " on " + endpoint
                    + ": connection closed by the peer before it read everything");
        }
    }

    @Override
    public boolean isOpen() {
        return !closed;
    }

    @Override
    public void close() {
        Listener l;
        Half h;
        synchronized (stateLock) {
            if (closed) {
                return;
            }
            closed = true;
            l = listener;
            h = half;
        }
        if (l != null) {
            l.close();
        }
        if (h != null) {
            h.close();
        }
    }

    @Override
    public MemoryRegion register(ByteBuffer buffer, Set<Access> access) throws IOException {
        Half h = connected();
        return h.regions.register(buffer, access, peerName() + "'s peer on " + endpoint);
    }

    @Override
    public void put(ByteBuffer src, RegionDescriptor remote, long offset) throws IOException {
        Half h = connected();
        LocalRegion region = target(h).regions.resolve(remote, offset, src.remaining(), Access.REMOTE_WRITE,
                h.peer().label);
        region.copyIn(src, offset);
    }

    @Override
    public void get(RegionDescriptor remote, long offset, ByteBuffer dst) throws IOException {
        Half h = connected();
        LocalRegion region = target(h).regions.resolve(remote, offset, dst.remaining(), Access.REMOTE_READ,
                h.peer().label);
        region.copyOut(offset, dst);
    }

    private Half target(Half h) throws IOException {
        Half peer = h.peer();
        if (peer.isClosed()) {
            throw new IOException("remote memory of " + peer.label + " on " + endpoint
                    + " is gone: the peer closed the connection");
        }
        return peer;
    }

    private Half connected() throws ClosedChannelException {
        ensureOpen();
        Half h = half;
        if (role != Role.CONNECTED || h == null) {
            throw new IllegalStateException(endpoint + " is not connected (" + describe(role) + ")");
        }
        return h;
    }

    private void ensureOpen() throws ClosedChannelException {
        if (closed) {
            throw new ClosedChannelException();
        }
    }

    private static String describe(Role r) {
        return switch (r) {
            case NEW -> "neither serving nor connected";
            case SERVING -> "serves";
            case CONNECTED -> "is connected";
        };
    }

    @Override
    public String toString() {
        return "LocalCommunicator[" + endpoint + ", " + peerName() + (closed ? ", closed]" : "]");
    }

    /** A connection without the handshake, for feeding a server arbitrary bytes. */
    private static final class RawChannel implements ByteChannel {
        private final Half half;
        private final String what;

        RawChannel(Half half, String what) {
            this.half = half;
            this.what = what;
        }

        @Override
        public int read(ByteBuffer dst) throws IOException {
            if (half.isClosed()) {
                throw new ClosedChannelException();
            }
            return half.in.read(dst, 0, what);
        }

        @Override
        public int write(ByteBuffer src) throws IOException {
            if (half.isClosed()) {
                throw new ClosedChannelException();
            }
            int n = src.remaining();
            half.out.write(src, 0, what);
            return n;
        }

        @Override
        public boolean isOpen() {
            return !half.isClosed();
        }

        @Override
        public void close() {
            half.close();
        }
    }
}
