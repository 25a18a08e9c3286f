package io.rdmacomm.clientcomm.bench;

import java.nio.ByteBuffer;

/** Message buffers for the benchmarks: direct, filled with a recognisable pattern, reused for every write. */
public final class Messages {
    private Messages() {
    }

    /** A direct buffer of {@code size} bytes holding a pattern that is not all zeros. */
    public static ByteBuffer pattern(int size) {
        ByteBuffer b = ByteBuffer.allocateDirect(size);
        for (int i = 0; i < size; i++) {
            b.put(i, (byte) (i * 31 + 7));
        }
        return b;
    }

    /** Whether the two buffers hold the same bytes over their whole capacity. */
    public static boolean sameContent(ByteBuffer a, ByteBuffer b) {
        return a.capacity() == b.capacity() && a.duplicate().clear().equals(b.duplicate().clear());
    }
}
