package io.rdmacomm.tcp;

import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.Endpoint;
import io.rdmacomm.api.support.AbstractCommunicator;
import io.rdmacomm.api.support.RateLimitedLog;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.AsynchronousCloseException;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@code tcp://} communicator. Stream bytes travel in frames (see the package documentation), so a raw
 * socket peer cannot talk to it. {@link #sync()} returns once the bytes are in the kernel's socket buffer.
 *
 * <p>One-sided operations are emulated by frames on the same connection, so they queue behind stream bytes: when
 * a side's stream input is full because its application reads nothing, put and get through that connection wait
 * until it reads. From the first {@code register}, {@code put} or {@code get} on a connection, a progress thread
 * reads its socket and {@code read} takes stream bytes from that thread, one hand-off more per read.
 */
public final class TcpCommunicator extends AbstractCommunicator<TcpConnection> {
    private static final Logger LOG = LoggerFactory.getLogger(TcpCommunicator.class);

    private final Settings settings;
    private volatile TcpServer server;
    /** One line a second at most: under descriptor pressure every accepted peer may fail the same way. */
    private final RateLimitedLog setupFailures = new RateLimitedLog(LOG);

    TcpCommunicator(Endpoint endpoint) {
        super(endpoint);
        this.settings = Settings.of(endpoint);
    }

    private TcpCommunicator(Endpoint serverEndpoint, Settings settings, TcpConnection accepted) {
        super(serverEndpoint, accepted);
        this.settings = settings;
    }

    @Override
    protected Endpoint listen() throws IOException {
        server = TcpServer.bind(endpoint(), settings);
        return server.endpoint();
    }

    @Override
    protected Communicator acceptNext() throws IOException {
        for (;;) {
            TcpServer.Accepted peer;
            try {
                peer = server.accept();
            } catch (ClosedChannelException e) {
                throw isOpen() ? new AsynchronousCloseException() : e;
            }
            try {
                return new TcpCommunicator(endpoint(), settings, TcpConnection.open(peer.channel(), peer.tls(),
                        endpoint(), settings, peer.peerHeartbeat()));
            } catch (IOException e) {
                setupFailures.warn("{}: dropped a handshaken peer that could not be set up: {}", endpoint(),
                        e.toString());
            }
        }
    }

    @Override
    protected TcpConnection dial() throws IOException {
        return dialWith(null);
    }

    /** Plain TCP without a shared secret, for 1 to {@link Dialer#EARLY_DATA_MAX} bytes. */
    @Override
    protected boolean sendsWithHandshake(ByteBuffer first) {
        return Dialer.sendsEarly(settings, first);
    }

    /**
     * Sends {@code first} as a DATA frame in the same write as the handshake; the server's handshake reads exactly
     * the hello, so the frame waits in its socket for the connection's reader.
     */
    @Override
    protected TcpConnection dial(ByteBuffer first) throws IOException {
        TcpConnection dialed = dialWith(first.duplicate());
        first.position(first.limit());
        return dialed;
    }

    /** Dials; {@code early} (null: none) goes as a DATA frame of its remaining bytes with the hello. */
    private TcpConnection dialWith(ByteBuffer early) throws IOException {
        SocketChannel channel = SocketChannel.open();
        Selector selector = null;
        try {
            // only TLS's handshake runs on a selector; plain TCP dials on the blocking channel, its waits bounded by
            // DialDeadlines
            selector = settings.tls() == null ? null : Selector.open();
            Selector s = selector;
            abortDialWith(() -> {
                TcpServer.closeQuietly(channel);
                if (s != null) {
                    s.wakeup();
                }
            });
            TlsSession tls = null;
            long peerHeartbeat;
            try (Dialer dialer = new Dialer(channel, selector, endpoint(), settings, () -> !isOpen())) {
                dialer.connect();
                if (early == null) {
                    tls = dialer.handshake();
                } else {
                    dialer.handshake(early);
                }
                peerHeartbeat = dialer.peerHeartbeat();
            }
            if (selector != null) {
                selector.close(); // deregisters the channel so it may turn blocking
            }
            return TcpConnection.open(channel, tls, endpoint(), settings, peerHeartbeat);
        } catch (IOException | RuntimeException e) {
            if (selector != null) {
                TcpServer.closeQuietly(selector);
            }
            TcpServer.closeQuietly(channel);
            throw e;
        }
    }

    @Override
    protected void stopServing() {
        server.close();
    }
}
