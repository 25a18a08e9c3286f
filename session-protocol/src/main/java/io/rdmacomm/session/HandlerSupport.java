package io.rdmacomm.session;

import io.rdmacomm.api.Communicator;
import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** What the handlers of the exchanges share: reading frames that may be cut short, ending sessions. */
final class HandlerSupport {
    private static final Logger LOG = LoggerFactory.getLogger(HandlerSupport.class);

    private HandlerSupport() {
    }

    /**
     * Fills {@code dst} from the client, or reports the truncation to it.
     *
     * @return whether {@code dst} was filled; when not, the client has been told and the session should end
     */
    static boolean readFrame(Communicator peer, ByteBuffer dst, String what) throws IOException {
        int wanted = dst.remaining();
        try {
            peer.readFully(dst);
            return true;
        } catch (EOFException e) {
            reportTruncated(peer, what, wanted - dst.remaining(), wanted);
            return false;
        }
    }

    /** Tells the client that {@code what} ended after {@code got} of {@code wanted} bytes. */
    static void reportTruncated(Communicator peer, String what, long got, long wanted) {
        report(peer, ExchangeResult.error(SessionStatus.TRUNCATED, what + " truncated: " + got + " of " + wanted
                + " bytes arrived before the stream ended"));
    }

    /**
     * Tells the client why its exchange ends, then waits for it to end the stream (see
     * {@link #awaitEndOfStream}: the client may still be releasing a region of its own, which on RDMA needs this
     * side). Failing to deliver the error (the client may be gone already) is logged, not thrown: the session
     * ends either way.
     */
    static void report(Communicator peer, ExchangeResult error) {
        LOG.warn("session from {} ends: {}", peer.peerName(), error);
        try {
            error.send(peer);
            awaitEndOfStream(peer);
        } catch (IOException e) {
            LOG.debug("could not deliver the error to {}", peer.peerName(), e);
        }
    }

    /**
     * Waits for the client to end the stream after the exchange, discarding anything it still sends: closing
     * first could reset the connection (on TCP, with bytes unread) before the client has read the last result.
     */
    static void awaitEndOfStream(Communicator peer) throws IOException {
        ByteBuffer discard = ByteBuffer.allocate(512);
        long extra = 0;
        for (int n; (n = peer.read(discard.clear())) >= 0; ) {
            extra += n;
        }
        if (extra > 0) {
            LOG.warn("{} sent {} bytes after its exchange was complete", peer.peerName(), extra);
        }
    }
}
