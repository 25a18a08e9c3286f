package io.rdmacomm.rdma.spi;

import java.nio.ByteBuffer;

/**
 * Memory a provider allocated together with its registration. Closing the region may unmap the memory: the
 * buffer must not be touched afterwards. {@code control}, where not null, is a small area (at least 128 bytes,
 * 8-byte aligned) that a peer which maps this ring ({@link RdmaChannel#mapRemote}) shares with the owner: the
 * engine's words for notifying written ring bytes without a message.
 */
public record RegisteredBuffer(ByteBuffer buffer, LocalRegion region, ByteBuffer control) {

    /** Memory without control words. */
    public RegisteredBuffer(ByteBuffer buffer, LocalRegion region) {
        this(buffer, region, null);
    }
}
