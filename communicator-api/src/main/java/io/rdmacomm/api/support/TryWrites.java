package io.rdmacomm.api.support;

import java.io.IOException;
import java.nio.ByteBuffer;

/** A gathering {@code tryWrite} for a transport whose tryWrite takes one buffer at a time. */
public final class TryWrites {
    /** One buffer's {@code tryWrite}: the bytes taken, 0 if none fit, -1 if it cannot write without waiting. */
    @FunctionalInterface
    public interface One {
        int tryWrite(ByteBuffer src) throws IOException;
    }

    private TryWrites() {
    }

    /**
     * Offers the buffers to {@code one} in order until one is not taken whole.
     *
     * @return the bytes taken; -1 if the first buffer was refused
     */
    public static long each(One one, ByteBuffer[] srcs, int offset, int length) throws IOException {
        long taken = 0;
        for (int i = offset; i < offset + length; i++) {
            int want = srcs[i].remaining();
            int n = one.tryWrite(srcs[i]);
            if (n < 0) {
                return taken == 0 ? -1 : taken;
            }
            taken += n;
            if (n < want) {
                break;
            }
        }
        return taken;
    }
}
