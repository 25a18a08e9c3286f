package io.rdmacomm.bench;

import io.rdmacomm.clientcomm.bench.BulkSender;
import io.rdmacomm.clientcomm.bench.EchoRoundTrip;
import java.io.EOFException;
import java.io.IOException;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;

/** The client side of the raw NIO baseline: a bare {@link SocketChannel} with {@code TCP_NODELAY}. */
final class RawClient implements AutoCloseable {
    private final SocketChannel ch;
    private final String peer;

    private RawClient(SocketChannel ch, String peer) {
        this.ch = ch;
        this.peer = peer;
    }

    /**
     * Connects (blocking) and has the raw server accept a run of {@code kind}; for
     * {@link RawProtocol.Kind#ECHO_BUSY_POLL} the socket is then made non-blocking.
     */
    static RawClient connect(InetSocketAddress address, RawProtocol.Kind kind, long sinkTotal) throws IOException {
        String peer = address.getHostString() + ":" + address.getPort();
        SocketChannel ch = SocketChannel.open();
        try {
            ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
            try {
                ch.connect(address);
            } catch (ConnectException e) {
                throw new ConnectException("cannot connect to raw baseline server " + peer + ": " + e.getMessage());
            }
            RawProtocol.greet(ch, kind, sinkTotal, peer);
            ch.configureBlocking(kind != RawProtocol.Kind.ECHO_BUSY_POLL);
            return new RawClient(ch, peer);
        } catch (IOException | RuntimeException e) {
            ch.close();
            throw e;
        }
    }

    /** A blocking ping-pong of {@code size}-byte messages. */
    EchoRoundTrip blockingRoundTrip(int size) {
        return new EchoRoundTrip(peer, size) {
            @Override
            public void roundTrip() throws IOException {
                out.clear();
                RawProtocol.writeFully(ch, out);
                in.clear();
                RawProtocol.readFully(ch, in, peer);
            }
        };
    }

    /** A ping-pong that spins on the non-blocking socket instead of sleeping in the kernel. */
    EchoRoundTrip busyPollRoundTrip(int size) {
        return new EchoRoundTrip(peer, size) {
            @Override
            public void roundTrip() throws IOException {
                out.clear();
                while (out.hasRemaining()) {
                    if (ch.write(out) == 0) {
                        Thread.onSpinWait();
                    }
                }
                in.clear();
                while (in.hasRemaining()) {
                    int n = ch.read(in);
                    if (n < 0) {
                        throw new EOFException("end of stream from " + peer + " in the middle of an echo");
                    }
                    if (n == 0) {
                        Thread.onSpinWait();
                    }
                }
            }
        };
    }

    /** A sender for a sink run: blocking writes, then the 8-byte count the server acknowledges. */
    BulkSender sender() {
        return new BulkSender() {
            @Override
            public void write(ByteBuffer src) throws IOException {
                RawProtocol.writeFully(ch, src);
            }

            @Override
            public long awaitAck() throws IOException {
                ByteBuffer ack = ByteBuffer.allocate(Long.BYTES);
                RawProtocol.readFully(ch, ack, peer);
                return ack.getLong(0);
            }
        };
    }

    @Override
    public void close() throws IOException {
        ch.close();
    }
}
