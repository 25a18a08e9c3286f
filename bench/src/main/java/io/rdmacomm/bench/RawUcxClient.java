package io.rdmacomm.bench;

import io.rdmacomm.api.HandshakeException;
import io.rdmacomm.clientcomm.bench.BulkSender;
import io.rdmacomm.clientcomm.bench.EchoRoundTrip;
import io.rdmacomm.clientcomm.bench.Messages;
import io.rdmacomm.clientcomm.bench.RoundTrip;
import java.io.IOException;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import org.openucx.jucx.ucp.UcpEndpointParams;
import org.openucx.jucx.ucp.UcpRemoteKey;
import org.openucx.jucx.ucp.UcpRequest;

/**
 * The client side of the raw JUCX baseline: one endpoint to {@code raw-ucx-serve} on its own context and worker,
 * busy-polled by the calling thread, which must be the only one to use it.
 */
final class RawUcxClient implements AutoCloseable {
    /** How long {@link #close()} waits for the server's answer to its bye. */
    static final long BYE_NANOS = 2_000_000_000L;

    private final RawUcx.Node node;
    private final RawUcx.Peer peer;
    /** The server's region, for put runs; null otherwise. */
    private final Target target;

    /** The peer's region of a put run, and the control connection of an idle put run (else null). */
    private record Target(long address, int size, UcpRemoteKey key, SocketChannel control) {
    }

    private RawUcxClient(RawUcx.Node node, RawUcx.Peer peer, Target target) {
        this.node = node;
        this.peer = peer;
        this.target = target;
    }

    /** {@link #connect(InetSocketAddress, int, int, long, RawUcx.TargetMemory, Duration)} of an echo or sink run. */
    static RawUcxClient connect(InetSocketAddress address, int kind, int size, long total, Duration timeout)
            throws IOException {
        return connect(address, kind, size, total, RawUcx.TargetMemory.UCX, timeout);
    }

    /**
     * Connects and has the server accept a run: {@link RawUcx#KIND_ECHO} of {@code size}-byte messages,
     * {@link RawUcx#KIND_SINK} or {@link RawUcx#KIND_PUT} of {@code total} bytes in messages or puts of at most
     * {@code size}, or {@link RawUcx#KIND_IDLE_PUT} of {@code size}-byte puts into a server that sleeps up to
     * {@code total} ms; put runs into a region of {@code memory}.
     *
     * @throws ConnectException if no raw UCX server answers at {@code address} within {@code timeout}
     * @throws HandshakeException if the server is not a raw UCX baseline server or refuses the run
     */
    static RawUcxClient connect(InetSocketAddress address, int kind, int size, long total, RawUcx.TargetMemory memory,
            Duration timeout) throws IOException {
        RawUcx.Node node = RawUcx.Node.open();
        String name = RawUcx.name(address);
        RawUcx.Peer peer = new RawUcx.Peer(node, name, () -> false);
        try {
            try {
                peer.ep = node.worker.newEndpoint(new UcpEndpointParams().setSocketAddress(address)
                        .setErrorHandler(peer::onError).setName("rdmacomm-raw-ucx"));
            } catch (RuntimeException e) {
                throw new ConnectException("UCX could not connect to " + name + ": " + e.getMessage());
            }
            ByteBuffer small = ByteBuffer.allocateDirect(RawUcx.HELLO_LENGTH);
            long smallAddress = RawUcx.address(small);
            peer.session = 0;
            UcpRequest welcome = peer.receive(smallAddress, RawUcx.WELCOME_LENGTH, RawUcx.WELCOME);
            try {
                peer.await(welcome, "welcome", timeout.toNanos());
            } catch (IOException e) {
                ConnectException ce = new ConnectException("cannot connect to raw UCX baseline server " + name
                        + " (start it with 'bench/baseline raw-ucx-serve'): " + e.getMessage());
                ce.initCause(e);
                throw ce;
            }
            int magic = small.getInt(0);
            int version = Short.toUnsignedInt(small.getShort(4));
            if (magic != RawUcx.MAGIC || version != RawUcx.VERSION) {
                throw new HandshakeException(String.format("%s is not a raw UCX baseline server of version %d:"
                        + " expected magic 0x%08x, got 0x%08x version %d", name, RawUcx.VERSION, RawUcx.MAGIC,
                        magic, version));
            }
            peer.session = small.getLong(8);
            small.putInt(0, kind).putInt(4, size).putLong(8, total).putInt(16, memory.ordinal()).putInt(20, 0);
            peer.await(peer.send(smallAddress, RawUcx.HELLO_LENGTH, RawUcx.HELLO), "hello");
            peer.await(peer.receive(smallAddress, Long.BYTES, RawUcx.ANSWER), "answer", timeout.toNanos());
            long status = small.getLong(0);
            if (status != RawUcx.STATUS_OK) {
                throw new HandshakeException(name + " refused the raw UCX run (status " + status
                        + "; its log says why)");
            }
            Target target = kind == RawUcx.KIND_PUT || kind == RawUcx.KIND_IDLE_PUT
                    ? target(peer, address, size, timeout) : null;
            return new RawUcxClient(node, peer, target);
        } catch (IOException | RuntimeException e) {
            peer.close(true);
            node.close();
            throw e;
        }
    }

    /** Receives the server's REGION and, for an idle put run, connects its control port. */
    private static Target target(RawUcx.Peer peer, InetSocketAddress address, int size, Duration timeout)
            throws IOException {
        ByteBuffer region = ByteBuffer.allocateDirect(RawUcx.REGION_MAX_LENGTH);
        UcpRequest r = peer.receive(RawUcx.address(region), region.capacity(), RawUcx.REGION);
        peer.await(r, "region", timeout.toNanos());
        int port = region.getInt(8);
        int keyLength = region.getInt(12);
        // not checked against the request's receive size: JUCX 1.12 leaves it 0 for a message that had arrived
        if (keyLength < 1 || keyLength > region.capacity() - 16) {
            throw new HandshakeException(peer.name + " sent a region message announcing a remote key of "
                    + keyLength + " bytes");
        }
        UcpRemoteKey key = peer.ep.unpackRemoteKey(region.slice(16, keyLength));
        SocketChannel control = null;
        try {
            if (port != 0) {
                control = SocketChannel.open();
                control.setOption(StandardSocketOptions.TCP_NODELAY, true);
                control.connect(new InetSocketAddress(address.getAddress(), port));
            }
            return new Target(region.getLong(0), size, key, control);
        } catch (IOException | RuntimeException e) {
            if (control != null) {
                control.close();
            }
            key.close();
            throw e;
        }
    }

    /**
     * A tagged ping-pong of {@code size}-byte messages: the receive of the pong is posted before the ping is sent,
     * then both are awaited by busy-polling the worker.
     */
    Echo roundTrip(int size) {
        return new Echo(size);
    }

    final class Echo extends EchoRoundTrip {
        private final long outAddress;
        private final long inAddress;
        private final int size;

        private Echo(int size) {
            super(peer.name, size);
            this.size = size;
            this.outAddress = RawUcx.address(out);
            this.inAddress = RawUcx.address(in);
        }

        @Override
        public void roundTrip() throws IOException {
            UcpRequest pong = peer.receive(inAddress, size, RawUcx.PONG);
            peer.await(peer.send(outAddress, size, RawUcx.PING), "ping");
            peer.await(pong, "pong");
        }
    }

    /**
     * A sender for a sink run: each write is one tagged send straight from the caller's buffer, up to
     * {@link RawUcx#WINDOW} in flight, so the buffer's content must stay as it is until {@link BulkSender#awaitAck}
     * (the bandwidth loop reuses one unchanging buffer).
     */
    BulkSender sender() {
        UcpRequest[] window = new UcpRequest[RawUcx.WINDOW];
        return new BulkSender() {
            private int next;

            @Override
            public void write(ByteBuffer src) throws IOException {
                if (window[next] != null) {
                    peer.await(window[next], "sink");
                }
                window[next] = peer.send(RawUcx.address(src) + src.position(), src.remaining(), RawUcx.DATA);
                src.position(src.limit());
                next = (next + 1) % window.length;
            }

            @Override
            public long awaitAck() throws IOException {
                ByteBuffer ack = ByteBuffer.allocateDirect(Long.BYTES);
                UcpRequest r = peer.receive(RawUcx.address(ack), Long.BYTES, RawUcx.ACK);
                for (int i = 0; i < window.length; i++) {
                    if (window[i] != null) {
                        peer.await(window[i], "sink");
                        window[i] = null;
                    }
                }
                peer.await(r, "sink acknowledgement");
                return ack.getLong(0);
            }
        };
    }

    /**
     * A sender for a put run: each write is a put straight from the caller's buffer into the server's region,
     * followed by a flush that completes once the bytes are placed there; the acknowledged count is what the
     * flushes confirmed.
     */
    BulkSender putSender() {
        Target t = putTarget();
        return new BulkSender() {
            private long placed;

            @Override
            public void write(ByteBuffer src) throws IOException {
                int n = src.remaining();
                putAndFlush(RawUcx.address(src) + src.position(), n, t);
                src.position(src.limit());
                placed += n;
            }

            @Override
            public long awaitAck() {
                return placed;
            }
        };
    }

    /**
     * A put run's round trip: a put of {@code size} bytes and its flush; in an idle put run, while the server does
     * not progress, followed by one byte on the control connection that lets the server go back to sleep.
     */
    RoundTrip putRoundTrip(int size) {
        Target t = putTarget();
        ByteBuffer out = Messages.pattern(size);
        long outAddress = RawUcx.address(out);
        ByteBuffer done = ByteBuffer.allocateDirect(1);
        return () -> {
            putAndFlush(outAddress, size, t);
            if (t.control() != null) {
                done.clear();
                while (done.hasRemaining()) {
                    t.control().write(done);
                }
            }
        };
    }

    private Target putTarget() {
        if (target == null) {
            throw new IllegalStateException("not a put run");
        }
        return target;
    }

    private void putAndFlush(long address, int length, Target t) throws IOException {
        if (length > t.size()) {
            throw new IllegalArgumentException("a put of " + length + " bytes into a region of " + t.size());
        }
        UcpRequest put = peer.put(address, length, t.address(), t.key());
        peer.await(peer.flush(), "flush");
        peer.await(put, "put");
    }

    /** Closes the endpoint at once, without a bye, as a client that dies would; then the worker and context. */
    void abandon() {
        closeTarget();
        peer.close(true);
        node.close();
    }

    /**
     * Says bye and waits (bounded) for the server's answer, then closes the endpoint (flushing) and the worker and
     * context. An endpoint closed before the server has the bye could reach it as a reset ahead of the bye.
     */
    @Override
    public void close() {
        try {
            // an idle put server waits on the control connection until it closes, then for the bye
            closeTarget();
            if (!peer.failed()) {
                ByteBuffer bye = ByteBuffer.allocateDirect(2 * Long.BYTES);
                UcpRequest answer = peer.receive(RawUcx.address(bye) + Long.BYTES, Long.BYTES, RawUcx.BYE);
                peer.await(peer.send(RawUcx.address(bye), Long.BYTES, RawUcx.BYE), "bye");
                peer.await(answer, "bye", BYE_NANOS);
            }
        } catch (IOException | RuntimeException e) {
            // the server drops the session on its own when the endpoint goes
        } finally {
            peer.close(false);
            node.close();
        }
    }

    private void closeTarget() {
        if (target == null) {
            return;
        }
        try {
            if (target.control() != null) {
                target.control().close();
            }
        } catch (IOException e) {
            // the server sees the connection end either way
        } finally {
            target.key().close();
        }
    }
}
