package io.rdmacomm.clientcomm.bench;

import io.rdmacomm.api.Communicator;
import io.rdmacomm.session.SessionProtocol;
import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * Streams into a servercomm SINK session; the acknowledgement is the session protocol's sink ack. With
 * {@code syncEvery} N > 0 it syncs after every N writes (a message-rate run: each batch handed to the peer).
 */
public final class CommunicatorSender implements BulkSender {
    private final Communicator peer;
    private final long syncEvery;
    private long unsynced;

    public CommunicatorSender(Communicator peer) {
        this(peer, 0);
    }

    public CommunicatorSender(Communicator peer, long syncEvery) {
        this.peer = peer;
        this.syncEvery = syncEvery;
    }

    @Override
    public void write(ByteBuffer src) throws IOException {
        peer.write(src);
        if (syncEvery > 0 && ++unsynced == syncEvery) {
            unsynced = 0;
            peer.sync();
        }
    }

    @Override
    public long awaitAck() throws IOException {
        peer.sync();
        return SessionProtocol.readSinkAck(peer);
    }
}
