package io.rdmacomm.api;

import java.nio.ByteBuffer;

/**
 * A local buffer registered for one-sided access by the peer of one connection. Closing it deregisters it:
 * later remote accesses through its descriptor fail with {@link RemoteAccessException}. Closing the
 * connection deregisters all of its regions.
 */
public interface MemoryRegion extends AutoCloseable {

    /** The registered memory (a view of the buffer given to {@code register}, position 0). */
    ByteBuffer buffer();

    /** The value to send to the peer so it can reach this region. */
    RegionDescriptor descriptor();

    /** Deregisters the region. Idempotent. */
    @Override
    void close();
}
