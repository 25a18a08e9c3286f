package io.rdmacomm.bench;

import io.rdmacomm.api.HandshakeException;
import java.io.IOException;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import org.openucx.jucx.ucp.UcpEndpointParams;
import org.openucx.jucx.ucp.UcpRequest;

/**
 * The client side of the raw JUCX baseline: one endpoint to {@code bench raw-ucx-serve} on its own context and
 * worker, busy-polled by the calling thread, which must be the only one to use it.
 */
final class RawUcxClient implements AutoCloseable {
    private final RawUcx.Node node;
    private final RawUcx.Peer peer;

    private RawUcxClient(RawUcx.Node node, RawUcx.Peer peer) {
        this.node = node;
        this.peer = peer;
    }

    /**
     * Connects and has the server accept a run: {@link RawUcx#KIND_ECHO} of {@code size}-byte messages, or
     * {@link RawUcx#KIND_SINK} of {@code total} bytes in messages of at most {@code size}.
     *
     * @throws ConnectException if no raw UCX server answers at {@code address} within {@code timeout}
     * @throws HandshakeException if the server is not a raw UCX baseline server or refuses the run
     */
    static RawUcxClient connect(InetSocketAddress address, int kind, int size, long total, Duration timeout)
            throws IOException {
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
                        + " (start it with 'clientcomm bench raw-ucx-serve'): " + e.getMessage());
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
            small.putInt(0, kind).putInt(4, size).putLong(8, total);
            peer.await(peer.send(smallAddress, RawUcx.HELLO_LENGTH, RawUcx.HELLO), "hello");
            peer.await(peer.receive(smallAddress, Long.BYTES, RawUcx.ANSWER), "answer", timeout.toNanos());
            long status = small.getLong(0);
            if (status != RawUcx.STATUS_OK) {
                throw new HandshakeException(name + " refused the raw UCX run (status " + status
                        + "; its log says why)");
            }
            return new RawUcxClient(node, peer);
        } catch (IOException | RuntimeException e) {
            peer.close(true);
            node.close();
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

    final class Echo implements RoundTrip {
        private final ByteBuffer out;
        private final ByteBuffer in;
        private final long outAddress;
        private final long inAddress;
        private final int size;

        private Echo(int size) {
            this.size = size;
            this.out = Messages.pattern(size);
            this.in = ByteBuffer.allocateDirect(size);
            this.outAddress = RawUcx.address(out);
            this.inAddress = RawUcx.address(in);
        }

        @Override
        public void roundTrip() throws IOException {
            UcpRequest pong = peer.receive(inAddress, size, RawUcx.PONG);
            peer.await(peer.send(outAddress, size, RawUcx.PING), "ping");
            peer.await(pong, "pong");
        }

        /** Whether the last pong held the bytes of the ping; call outside the measured loop. */
        boolean lastEchoMatches() {
            return Messages.sameContent(out, in);
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

    /** Closes the endpoint at once, without a bye, as a client that dies would; then the worker and context. */
    void abandon() {
        peer.close(true);
        node.close();
    }

    /** Says bye, closes the endpoint (flushing) and the worker and context. */
    @Override
    public void close() {
        try {
            if (!peer.failed()) {
                ByteBuffer bye = ByteBuffer.allocateDirect(Long.BYTES);
                peer.await(peer.send(RawUcx.address(bye), Long.BYTES, RawUcx.BYE), "bye");
            }
        } catch (IOException | RuntimeException e) {
            // the server drops the session on its own when the endpoint goes
        } finally {
            peer.close(false);
            node.close();
        }
    }
}
