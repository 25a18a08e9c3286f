package io.rdmacomm.clientcomm.bench;

import io.rdmacomm.api.CommunicatorException;
import java.nio.ByteBuffer;

/**
 * A round trip whose message comes back: {@link #out} holds a pattern, {@link #in} receives the echo, both direct
 * and reused for every call.
 */
public abstract class EchoRoundTrip implements RoundTrip {
    public final ByteBuffer out;
    public final ByteBuffer in;
    private final String peer;

    public EchoRoundTrip(String peer, int size) {
        this.peer = peer;
        this.out = Messages.pattern(size);
        this.in = ByteBuffer.allocateDirect(size);
    }

    /** Whether the last echo held the bytes sent; call outside the measured loop. */
    public final boolean lastEchoMatches() {
        return Messages.sameContent(out, in);
    }

    @Override
    public final void checkLast() throws CommunicatorException {
        if (!lastEchoMatches()) {
            throw new CommunicatorException("the echo from " + peer + " differs from the " + out.capacity()
                    + " bytes sent");
        }
    }
}
