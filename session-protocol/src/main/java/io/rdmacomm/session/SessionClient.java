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
