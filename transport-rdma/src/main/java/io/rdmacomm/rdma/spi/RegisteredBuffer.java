package io.rdmacomm.rdma.spi;

import java.nio.ByteBuffer;

/**
 * Memory a provider allocated together with its registration. Closing the region may unmap the memory: the
 * buffer must not be touched afterwards.
 */
public record RegisteredBuffer(ByteBuffer buffer, LocalRegion region) {
}
