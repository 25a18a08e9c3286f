package io.rdmacomm.tcp;

import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.Endpoint;
import io.rdmacomm.api.support.AbstractCommunicator;
import java.io.IOException;
import java.nio.channels.SocketChannel;

/**
 * The {@code tcp://…?wire=raw} communicator: a plain byte stream on the socket, no handshake and no frames, so a
 * peer that speaks raw TCP (a GVirtuS {@code TcpCommunicator}) can be either side. Nothing checks that the peer
 * speaks the application's protocol: that is the application's business. Remote memory is refused, since the stream
 * has no room for its frames.
 */
final class RawTcpCommunicator extends AbstractCommunicator<RawConnection> {
    private final Settings settings;
    private volatile RawServer server;

    RawTcpCommunicator(Endpoint endpoint) {
        super(endpoint);
        this.settings = Settings.of(endpoint);
    }

    private RawTcpCommunicator(Endpoint serverEndpoint, Settings settings, RawConnection accepted) {
        super(serverEndpoint, accepted);
        this.settings = settings;
    }

    @Override
    protected Endpoint listen() throws IOException {
        server = RawServer.bind(endpoint(), settings);
        return server.endpoint();
    }

    @Override
    protected Communicator acceptNext() throws IOException {
        SocketChannel channel = server.accept();
        return new RawTcpCommunicator(endpoint(), settings, RawConnection.open(channel, endpoint(), settings));
    }

    @Override
    protected RawConnection dial() throws IOException {
        SocketChannel channel = SocketChannel.open();
        try {
            abortDialWith(() -> TcpServer.closeQuietly(channel));
            // no handshake on this wire: a blocking connect within connectTimeout
            try (Dialer dialer = new Dialer(channel, null, endpoint(), settings, () -> !isOpen())) {
                dialer.connect();
                dialer.settle();
            }
            return RawConnection.open(channel, endpoint(), settings);
        } catch (IOException | RuntimeException e) {
            TcpServer.closeQuietly(channel);
            throw e;
        }
    }

    @Override
    protected void stopServing() {
        server.close();
    }
}
