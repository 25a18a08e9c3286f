package io.rdmacomm.api.support;

import io.rdmacomm.api.Communicator;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Arrays;

/** Reading a payload whose length the peer declared, before any of it arrived. */
public final class Payloads {
    /** The first allocation for a payload; it grows by doubling as bytes arrive. */
    public static final int FIRST_CHUNK = 64 * 1024;

    private Payloads() {
    }

    /**
     * Reads a payload of {@code length} bytes, holding only what arrived: the array starts at {@link #FIRST_CHUNK}
     * bytes and doubles as it fills, so a peer that declares a large length and sends a few bytes costs a few
     * bytes, and a whole payload at most one copy more.
     *
     * @return the payload, or fewer bytes (those that arrived) if the stream ended first
     */
    public static byte[] read(Communicator peer, int length) throws IOException {
        byte[] b = new byte[Math.min(length, FIRST_CHUNK)];
        int have = 0;
        while (have < length) {
            if (have == b.length) {
                b = Arrays.copyOf(b, (int) Math.min(length, 2L * b.length));
            }
            int n = peer.read(ByteBuffer.wrap(b, have, b.length - have));
            if (n < 0) {
                return Arrays.copyOf(b, have);
            }
            have += n;
        }
        return b;
    }
}
