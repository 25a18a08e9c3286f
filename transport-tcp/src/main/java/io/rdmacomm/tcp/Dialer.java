package io.rdmacomm.tcp;

import io.rdmacomm.api.Endpoint;
import io.rdmacomm.api.CommunicatorException;
import io.rdmacomm.api.HandshakeException;
import io.rdmacomm.api.auth.AuthenticationException;
import io.rdmacomm.api.auth.MutualAuthentication;
import io.rdmacomm.api.auth.SharedSecret;
import java.io.IOException;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.SocketTimeoutException;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.AsynchronousCloseException;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.nio.channels.UnresolvedAddressException;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * The client's side of a new connection: connects, then plays the client's part of the {@link Handshake}, both in
 * non-blocking mode on one selector so that {@code connectTimeout} bounds the whole. Closing the channel and waking
 * the selector from another thread aborts it.
 */
final class Dialer {
    private final SocketChannel channel;
    private final Selector selector;
    private final Endpoint endpoint;
    private final BooleanSupplier aborted;
    private final String where;
    private final long timeout;
    private final long deadline;
    private final SharedSecret secret;

    /**
     * @param aborted whether the owner was closed: a wait then ends with {@link AsynchronousCloseException}
     */
    Dialer(SocketChannel channel, Selector selector, Endpoint endpoint, Settings settings, BooleanSupplier aborted) {
        this.channel = channel;
        this.selector = selector;
        this.endpoint = endpoint;
        this.aborted = aborted;
        this.where = endpoint.scheme() + "://" + endpoint.authority();
        this.timeout = settings.connectTimeout();
        this.deadline = System.nanoTime() + (timeout == 0 ? Settings.FOREVER : timeout);
        this.secret = settings.secret();
    }

    /** Connects the channel to the endpoint; failures are {@link ConnectException}s naming it. */
    void connect() throws IOException {
        InetSocketAddress address = endpoint.socketAddress();
        if (address.isUnresolved()) {
            throw unknownHost();
        }
        channel.configureBlocking(false);
        channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
        SelectionKey key = channel.register(selector, 0);
        try {
            if (!channel.connect(address)) {
                key.interestOps(SelectionKey.OP_CONNECT);
                while (!channel.finishConnect()) {
                    waitUntilReady("connecting");
                }
            }
        } catch (ConnectException e) {
            ConnectException ce = new ConnectException("cannot connect to " + where + ": " + e.getMessage());
            ce.initCause(e);
            throw ce;
        } catch (UnresolvedAddressException e) {
            throw unknownHost();
        } catch (SocketTimeoutException | ClosedChannelException e) {
            throw e;
        } catch (IOException e) {
            ConnectException ce = new ConnectException("cannot connect to " + where + ": " + e);
            ce.initCause(e);
            throw ce;
        }
    }

    private ConnectException unknownHost() {
        return new ConnectException("cannot connect to " + where + ": unknown host '" + endpoint.host() + "'");
    }

    /**
     * Sends our handshake, checks the server's answer and, with a shared secret, authenticates both ways.
     *
     * @throws HandshakeException if the server does not speak this protocol or refused our version
     * @throws AuthenticationException if either side has no secret or they differ
     */
    void handshake() throws IOException {
        send(Handshake.encode(secret == null ? Handshake.NO_FLAGS : Handshake.FLAG_AUTH), "sending the handshake to");
        ByteBuffer reply = ByteBuffer.allocate(Handshake.LENGTH);
        receive(reply, "waiting for the handshake of");
        CommunicatorException refused = Handshake.checkServerReply(reply, reply.position(), "peer " + where);
        if (refused != null) {
            throw refused;
        }
        if (secret != null) {
            MutualAuthentication.prove(secret, new MutualAuthentication.Exchange() {
                @Override
                public void send(byte[] bytes) throws IOException {
                    Dialer.this.send(ByteBuffer.wrap(bytes), "authenticating with");
                }

                @Override
                public byte[] receive(int n) throws IOException {
                    ByteBuffer b = ByteBuffer.allocate(n);
                    if (!Dialer.this.receive(b, "authenticating with")) {
                        throw new AuthenticationException("peer " + where + " closed the connection during"
                                + " authentication after " + b.position() + " of " + n + " bytes");
                    }
                    return b.array();
                }
            }, "peer " + where);
        }
    }

    private void send(ByteBuffer b, String doing) throws IOException {
        channel.keyFor(selector).interestOps(SelectionKey.OP_WRITE);
        while (b.hasRemaining()) {
            if (channel.write(b) == 0) {
                waitUntilReady(doing);
            }
        }
    }

    /** Fills {@code b}; returns false if the stream ended first. */
    private boolean receive(ByteBuffer b, String doing) throws IOException {
        channel.keyFor(selector).interestOps(SelectionKey.OP_READ);
        while (b.hasRemaining()) {
            int n = channel.read(b);
            if (n < 0) {
                return false;
            }
            if (n == 0) {
                waitUntilReady(doing);
            }
        }
        return true;
    }

    private void waitUntilReady(String doing) throws IOException {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
            throw new SocketTimeoutException("timed out after " + Settings.format(timeout) + " (connectTimeout) "
                    + doing + " " + where);
        }
        selector.select(timeout == 0 ? 0 : TimeUnit.NANOSECONDS.toMillis(left) + 1);
        selector.selectedKeys().clear();
        if (aborted.getAsBoolean()) {
            throw new AsynchronousCloseException();
        }
    }
}
