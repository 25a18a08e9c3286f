package io.rdmacomm.bench;

import io.rdmacomm.api.Communicator;
import io.rdmacomm.session.SessionProtocol;
import java.io.IOException;
import java.nio.ByteBuffer;

/** Streams into a servercomm SINK session; the acknowledgement is the session protocol's sink ack. */
final class CommunicatorSender implements BulkSender {
    private final Communicator peer;

    CommunicatorSender(Communicator peer) {
        this.peer = peer;
    }

    @Override
    public void write(ByteBuffer src) throws IOException {
        peer.write(src);
    }

    @Override
    public long awaitAck() throws IOException {
        peer.sync();
        return SessionProtocol.readSinkAck(peer);
    }
}
