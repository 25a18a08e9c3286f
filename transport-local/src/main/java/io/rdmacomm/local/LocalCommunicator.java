package io.rdmacomm.local;

import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.Endpoint;
import io.rdmacomm.api.EndpointOption;
import io.rdmacomm.api.HandshakeException;
import io.rdmacomm.api.support.AbstractCommunicator;
import java.io.IOException;
import java.net.ConnectException;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.AsynchronousCloseException;
import java.nio.channels.ByteChannel;
import java.nio.channels.ClosedChannelException;
import java.util.HexFormat;
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
public final class LocalCommunicator extends AbstractCommunicator<Half> {
    private static final Logger LOG = LoggerFactory.getLogger(LocalCommunicator.class);
    /** 'RLOC'. */
    static final int MAGIC = 0x524C4F43;
    static final short VERSION = 1;
    static final int HELLO_BYTES = 6;
    private static final AtomicLong CONNECTIONS = new AtomicLong();

    private volatile Listener listener;

    LocalCommunicator(Endpoint endpoint) {
        super(endpoint);
    }

    private LocalCommunicator(Endpoint serverEndpoint, Half accepted) {
        super(serverEndpoint, accepted);
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
    protected Endpoint listen() throws IOException {
        listener = Listener.bind(endpoint());
        return endpoint();
    }

    @Override
    protected Communicator acceptNext() throws IOException {
        long acceptTimeout = endpoint().duration(EndpointOption.ACCEPT_TIMEOUT).toNanos();
        long deadline = System.nanoTime() + acceptTimeout;
        while (true) {
            Half h = listener.take(acceptTimeout, deadline);
            try {
                answerHandshake(h);
                return new LocalCommunicator(endpoint(), h);
            } catch (HandshakeException e) {
                LOG.warn("{}: dropped {}: {}", endpoint(), h.peer().label, e.getMessage());
                h.close();
            } catch (IOException e) {
                LOG.debug("{}: {} went away during the handshake: {}", endpoint(), h.peer().label, e.toString());
                h.close();
            }
            if (!isOpen()) {
                throw new AsynchronousCloseException();
            }
        }
    }

    @Override
    protected void stopServing() {
        listener.close();
    }

    private void answerHandshake(Half h) throws IOException {
        ByteBuffer hello = ByteBuffer.allocate(HELLO_BYTES);
        long timeout = endpoint().duration(EndpointOption.HANDSHAKE_TIMEOUT).toNanos();
        long deadline = System.nanoTime() + timeout;
        String what = "handshake from " + h.peer().label + " on " + endpoint();
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
    protected Half dial() throws IOException {
        long timeout = endpoint().duration(EndpointOption.CONNECT_TIMEOUT).toNanos();
        long deadline = System.nanoTime() + timeout;
        Half h = enqueue(endpoint());
        abortDialWith(h::close);
        String what = "connect to " + endpoint();
        try {
            h.out.write(hello(), 0, what);
            ByteBuffer reply = ByteBuffer.allocate(HELLO_BYTES);
            while (reply.hasRemaining()) {
                long left = timeout == 0 ? 0 : deadline - System.nanoTime();
                if (timeout != 0 && left <= 0) {
                    throw handshakeTimedOut(what, timeout);
                }
                int n;
                try {
                    n = h.in.read(reply, left, what);
                } catch (SocketTimeoutException e) {
                    throw handshakeTimedOut(what, timeout);
                }
                if (n < 0) {
                    throw new ConnectException(what + ": the server closed the connection during the handshake");
                }
            }
            reply.flip();
            checkHello(reply, what + ": handshake reply");
            return h;
        } catch (IOException | RuntimeException e) {
            h.close();
            throw e;
        }
    }

    private static SocketTimeoutException handshakeTimedOut(String what, long timeout) {
        return new SocketTimeoutException(what + " timed out after " + TimeUnit.NANOSECONDS.toMillis(timeout)
                + " ms (connectTimeout): the server did not answer the handshake");
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
        Half[] ends = Half.link(target, server, HELLO_BYTES, "local-client#" + n, server.host() + "#" + n);
        if (!l.offer(ends[1])) {
            throw new ConnectException("connection refused: " + target + " closed");
        }
        return ends[0];
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
