package io.rdmacomm.session;

import io.rdmacomm.api.Communicator;
import java.io.IOException;

/** The client side of the session protocol. */
public final class SessionClient {
    private SessionClient() {
    }

    /**
     * Sends {@code request} on a connected communicator and waits for the server's answer.
     *
     * @throws SessionException if the server refused the session; the message carries the server's reason
     * @throws IOException if the connection fails or the peer does not speak the session protocol
     */
    public static void open(Communicator peer, SessionRequest request) throws IOException {
        IOException sendFailure = null;
        try {
            peer.write(request.encode());
            peer.sync();
        } catch (IOException e) {
            // a server that refuses at once (busy) may close before taking the request; its reply says why
            sendFailure = e;
        }
        awaitReply(peer, request, sendFailure);
    }

    /**
     * Connects an unconnected communicator and opens the session for {@code request}: the request goes as the
     * client's first bytes ({@link Communicator#connect(java.nio.ByteBuffer)}), with the transport's handshake
     * where the transport can send it so (plain {@code tcp://}), so that the session opens one round trip after
     * the connection rather than two. On failure the communicator is left for the caller to close.
     *
     * @throws SessionException if the server refused the session; the message carries the server's reason
     * @throws IOException if the connection or its handshake fails, or the peer does not speak the session protocol
     */
    public static void connect(Communicator unconnected, SessionRequest request) throws IOException {
        unconnected.connect(request.encode());
        awaitOpened(unconnected, request);
    }

    /**
     * The rest of {@link #connect} after {@code peer.connect(request.encode())} returned (for a caller that tells
     * the connection's failures apart from the session's): delivers the request and waits for the server's answer.
     *
     * @throws SessionException if the server refused the session; the message carries the server's reason
     * @throws IOException if the connection fails or the peer does not speak the session protocol
     */
    public static void awaitOpened(Communicator peer, SessionRequest request) throws IOException {
        IOException sendFailure = null;
        try {
            peer.sync();
        } catch (IOException e) {
            sendFailure = e; // as in open: the reply may say why
        }
        awaitReply(peer, request, sendFailure);
    }

    private static void awaitReply(Communicator peer, SessionRequest request, IOException sendFailure)
            throws IOException {
        SessionReply reply;
        try {
            reply = SessionReply.read(peer);
        } catch (IOException e) {
            if (sendFailure != null) {
                sendFailure.addSuppressed(e);
                throw sendFailure;
            }
            throw e;
        }
        if (reply.status() != SessionStatus.OK) {
            throw new SessionException(reply.status(), "server " + peer.endpoint().authority() + " refused the "
                    + request.exchange() + " session: " + reply.status() + ": " + reply.message());
        }
    }
}
