package io.rdmacomm.tcp;

import io.rdmacomm.api.Endpoint;
import io.rdmacomm.api.CommunicatorException;
import io.rdmacomm.api.HandshakeException;
import io.rdmacomm.api.auth.AuthenticationException;
import io.rdmacomm.api.auth.MutualAuthentication;
import io.rdmacomm.api.auth.SharedSecret;
import java.io.EOFException;
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
import javax.net.ssl.SSLException;

/**
 * The client's side of a new connection: connects, runs TLS's handshake if the endpoint says {@code tls=true},
 * then plays the client's part of the {@link Handshake} (inside TLS), so that {@code connectTimeout} bounds the
 * whole. With TLS it runs in non-blocking mode on a selector of its own; in plain TCP, with no selector, on the
 * blocking channel, its calls waiting in the kernel and {@link DialDeadlines} closing the socket if
 * {@code connectTimeout} passes (no descriptor besides the socket, and no switch to non-blocking mode and back around
 * each wait). Closing the channel (and waking the selector, if any) from another thread aborts it. Close the dialer
 * when done with it, whether the dial succeeded or not.
 */
final class Dialer implements AutoCloseable {
    /** The most bytes a client's first write may send with the plain handshake ({@link #handshake(ByteBuffer)}). */
    static final int EARLY_DATA_MAX = 4096;

    private final SocketChannel channel;
    private final Selector selector;
    private final Endpoint endpoint;
    private final BooleanSupplier aborted;
    private final String where;
    private final long timeout;
    private final long deadline;
    private final SharedSecret secret;
    private final short heartbeatBits;
    private final TlsConfig tlsConfig;
    private TlsSession tls;
    private long peerHeartbeat;
    /** The deadline of a plain dial with a connectTimeout, from its connect on; null otherwise. */
    private DialDeadlines.Watch watch;
    /** What a plain dial's blocking call is doing, for the message if the deadline ends it. */
    private String doing = "connecting to";

    /**
     * @param selector where the non-blocking TLS handshake waits; null in plain TCP (the channel stays blocking)
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
        this.heartbeatBits = settings.heartbeatBits();
        this.tlsConfig = settings.tls();
    }

    /** Connects the channel to the endpoint; failures are {@link ConnectException}s naming it. */
    void connect() throws IOException {
        InetSocketAddress address = endpoint.socketAddress();
        if (address.isUnresolved()) {
            throw unknownHost();
        }
        channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
        try {
            if (selector == null) {
                connectBlocking(address);
                return;
            }
            channel.configureBlocking(false);
            SelectionKey key = channel.register(selector, 0);
            if (!channel.connect(address)) {
                key.interestOps(SelectionKey.OP_CONNECT);
                while (!channel.finishConnect()) {
                    waitUntilReady("connecting to");
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
            String why = String.valueOf(e.getMessage()).contains("reset")
                    // accepted, then closed at once with our hello unread: a server that cannot take us
                    ? "the server closed the connection before answering the handshake (it may be at its connection"
                            + " limit or out of file descriptors; try again later): " + e.getMessage()
                    : e.toString();
            ConnectException ce = new ConnectException("cannot connect to " + where + ": " + why);
            ce.initCause(e);
            throw ce;
        }
    }

    /** Connects the blocking channel; from here on {@code connectTimeout}'s deadline is watched. */
    private void connectBlocking(InetSocketAddress address) throws IOException {
        if (timeout != 0) {
            watch = DialDeadlines.watch(deadline, channel);
        }
        doing = "connecting to";
        try {
            channel.connect(address);
        } catch (IOException e) {
            // a failed connect closes the channel itself: only the owner's close or the deadline make this an abort
            throw ended(e);
        }
    }

    /**
     * What a plain dial's blocking call that failed with {@code e} throws: an abort if the owner closed the
     * communicator, the timeout if the deadline closed the socket, else {@code e}.
     */
    private IOException ended(IOException e) {
        if (aborted.getAsBoolean()) {
            return new AsynchronousCloseException();
        }
        if (watch != null && watch.expired()) {
            SocketTimeoutException t = timedOut(doing);
            t.initCause(e);
            return t;
        }
        return e;
    }

    /**
     * Ends the watch of a plain dial's deadline once its last blocking call returned ({@link #handshake} does; a dial
     * without a handshake calls it after {@link #connect}); throws the timeout if the deadline came first.
     */
    void settle() throws SocketTimeoutException {
        if (watch != null && !watch.settle()) {
            throw timedOut(doing);
        }
    }

    /** Stops watching the deadline (if the dial has not already settled it). */
    @Override
    public void close() {
        if (watch != null) {
            watch.close();
        }
    }

    /** What is left of {@code connectTimeout}, in whole milliseconds (0: no timeout); throws once none is left. */
    private int millisLeft(String doing) throws SocketTimeoutException {
        if (timeout == 0) {
            return 0;
        }
        long left = deadline - System.nanoTime();
        if (left <= 0) {
            throw timedOut(doing);
        }
        return (int) Math.min(Integer.MAX_VALUE, TimeUnit.NANOSECONDS.toMillis(left) + 1);
    }

    private SocketTimeoutException timedOut(String doing) {
        return new SocketTimeoutException("timed out after " + Settings.format(timeout) + " (connectTimeout) "
                + doing + " " + where);
    }

    private ConnectException unknownHost() {
        return new ConnectException("cannot connect to " + where + ": unknown host '" + endpoint.host() + "'");
    }

    /**
     * Runs TLS's handshake where the endpoint asks for it, sends our handshake, checks the server's answer and, with
     * a shared secret, authenticates both ways.
     *
     * @return the connection's TLS session, or null without TLS; {@link #peerHeartbeat()} then tells the heartbeat
     *         period the server asked for
     * @throws HandshakeException if the server does not speak this protocol or refused our version, or TLS failed
     * @throws AuthenticationException if either side has no secret or they differ
     */
    TlsSession handshake() throws IOException {
        if (tlsConfig == null) {
            handshakeInside(null);
            settle();
            return null;
        }
        tls = tlsConfig.clientSession(endpoint, where);
        tlsHandshake();
        try {
            handshakeInside(null);
        } catch (SSLException e) {
            // in TLS 1.3 a server refuses a client's certificate after the client finished its handshake
            throw new HandshakeException("peer " + where + ": " + TlsSession.explain(e, "the server's", "our"), e);
        }
        return tls;
    }

    /**
     * Whether a dial with these settings sends {@code first} with its hello ({@link #handshake(ByteBuffer)}): plain
     * TCP, no shared secret (whose authentication must come first) and 1 to {@link #EARLY_DATA_MAX} bytes.
     */
    static boolean sendsEarly(Settings settings, ByteBuffer first) {
        return settings.tls() == null && settings.secret() == null && first.hasRemaining()
                && first.remaining() <= EARLY_DATA_MAX;
    }

    /**
     * {@link #handshake()} for what {@link #sendsEarly} accepts: the client's first stream bytes, all that
     * {@code early} holds, go as a DATA frame in the same write as our hello, before the server's answer. They reach
     * the server's application only if it accepts the handshake.
     */
    void handshake(ByteBuffer early) throws IOException {
        handshakeInside(early);
        settle();
    }

    /** Our handshake and authentication, in plain or inside TLS; {@code early}: see {@link #handshake(ByteBuffer)}. */
    private void handshakeInside(ByteBuffer early) throws IOException {
        short flags = (short) ((secret == null ? Handshake.NO_FLAGS : Handshake.FLAG_AUTH) | heartbeatBits);
        ByteBuffer reply = ByteBuffer.allocate(Handshake.LENGTH);
        try {
            // a server that cannot take us may reset the connection before our hello is even sent
            send(early == null ? Handshake.encode(flags) : withEarlyData(flags, early), "sending the handshake to");
            receive(reply, "waiting for the handshake of");
        } catch (SocketTimeoutException | ClosedChannelException | SSLException e) {
            throw e;
        } catch (IOException e) {
            if (reply.position() == 0) {
                // a server that closes a peer it cannot take, unread hello and all, resets the connection
                throw Handshake.closedBeforeAnswering("peer " + where, e);
            }
            throw e;
        }
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
        peerHeartbeat = heartbeatBits == 0 ? 0 : Handshake.heartbeatPeriod(reply.getShort(Handshake.FLAGS_OFFSET));
    }

    /** Our hello with a DATA frame of {@code early}'s remaining bytes after it, ready to send. */
    private static ByteBuffer withEarlyData(short flags, ByteBuffer early) {
        int n = early.remaining();
        ByteBuffer b = ByteBuffer.allocate(Handshake.LENGTH + Wire.HEADER_LENGTH + n);
        b.put(Handshake.encode(flags)).put(Wire.DATA).putInt(n).put(early);
        return b.flip();
    }

    /** After {@link #handshake}: the heartbeat period the server asked for, in nanoseconds; 0 when heartbeats are off. */
    long peerHeartbeat() {
        return peerHeartbeat;
    }

    private void tlsHandshake() throws IOException {
        SelectionKey key = channel.keyFor(selector);
        try {
            for (int wait; (wait = tls.handshake(channel)) != 0; ) {
                key.interestOps(wait);
                waitUntilReady("in the TLS handshake with");
            }
        } catch (SSLException e) {
            ByteBuffer got = tls.received();
            if (got.position() == 0 && Handshake.magicPrefixMatches(got, got.remaining()) && got.hasRemaining()) {
                throw new HandshakeException("peer " + where + " does not use TLS (it answered in the plain rdmacomm"
                        + " tcp protocol): drop tls=true here, or turn TLS on at the server");
            }
            throw new HandshakeException("peer " + where + ": " + TlsSession.explain(e, "the server's", "our"), e);
        } catch (EOFException e) {
            throw new HandshakeException(e.getMessage() + " (does the server use TLS? did it refuse our"
                    + " certificate?)", e);
        }
    }

    private void send(ByteBuffer b, String doing) throws IOException {
        if (selector == null) {
            // a few bytes on a fresh connection: a blocking write returns at once
            this.doing = doing;
            try {
                while (b.hasRemaining()) {
                    channel.write(b);
                }
            } catch (IOException e) {
                throw ended(e);
            }
            return;
        }
        channel.keyFor(selector).interestOps(SelectionKey.OP_WRITE);
        if (tls == null) {
            while (b.hasRemaining()) {
                if (channel.write(b) == 0) {
                    waitUntilReady(doing);
                }
            }
            return;
        }
        ByteBuffer[] bs = {b};
        while (!tls.send(channel, bs)) {
            waitUntilReady(doing);
        }
    }

    /** Fills {@code b}; returns false if the stream ended first. */
    private boolean receive(ByteBuffer b, String doing) throws IOException {
        if (selector == null) {
            return receiveBlocking(b, doing);
        }
        channel.keyFor(selector).interestOps(SelectionKey.OP_READ);
        while (b.hasRemaining()) {
            int n;
            try {
                n = tls == null ? channel.read(b) : tls.read(channel, b);
            } catch (EOFException hungUp) {
                return false; // a server that refuses us hangs up without ending TLS: the caller says what it means
            }
            if (n < 0) {
                return false;
            }
            if (n == 0) {
                waitUntilReady(doing);
            }
        }
        return true;
    }

    /** {@link #receive} on the blocking channel: reads that wait in the kernel, ended by the deadline if it passes. */
    private boolean receiveBlocking(ByteBuffer b, String doing) throws IOException {
        this.doing = doing;
        try {
            while (b.hasRemaining()) {
                if (channel.read(b) < 0) {
                    return false;
                }
            }
            return true;
        } catch (IOException e) {
            throw ended(e);
        }
    }

    private void waitUntilReady(String doing) throws IOException {
        selector.select(millisLeft(doing));
        selector.selectedKeys().clear();
        if (aborted.getAsBoolean()) {
            throw new AsynchronousCloseException();
        }
    }
}
