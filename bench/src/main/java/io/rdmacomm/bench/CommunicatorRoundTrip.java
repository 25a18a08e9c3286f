package io.rdmacomm.bench;

import io.rdmacomm.api.Communicator;
import java.io.IOException;
import java.nio.ByteBuffer;

/** A round trip through a communicator in an ECHO session: write, sync, read the echo back whole. */
final class CommunicatorRoundTrip implements RoundTrip {
    private final Communicator peer;
    private final ByteBuffer out;
    private final ByteBuffer in;

    CommunicatorRoundTrip(Communicator peer, int size) {
        this.peer = peer;
        this.out = Messages.pattern(size);
        this.in = ByteBuffer.allocateDirect(size);
    }

    @Override
    public void roundTrip() throws IOException {
        out.clear();
        peer.write(out);
        peer.sync();
        in.clear();
        peer.readFully(in);
    }

    /** Whether the last echo matched what was sent; call outside the measured loop. */
    boolean lastEchoMatches() {
        return Messages.sameContent(out, in);
    }
}
