package io.rdmacomm.rdma.spi;

import java.nio.ByteBuffer;

/**
 * A peer's receive ring mapped into this process ({@link RdmaChannel#mapRemote}).
 *
 * @param ring the ring's bytes, offset for offset
 * @param control the ring's control words shared with its owner (see {@link RegisteredBuffer#control()}), or null
 */
public record MappedRing(ByteBuffer ring, ByteBuffer control) {
}
