package io.rdmacomm.clientcomm.bench;

import io.rdmacomm.api.Communicator;
import java.io.IOException;

/** A round trip through a communicator in an ECHO session: write, sync, read the echo back whole. */
public final class CommunicatorRoundTrip extends EchoRoundTrip {
    private final Communicator peer;

    public CommunicatorRoundTrip(Communicator peer, int size) {
        super(peer.peerName(), size);
        this.peer = peer;
    }

    @Override
    public void roundTrip() throws IOException {
        out.clear();
        peer.write(out);
        peer.sync();
        in.clear();
        peer.readFully(in);
    }
}
