package io.rdmacomm.rdma.spi;

import io.rdmacomm.api.RegionDescriptor;

/**
 * Memory registered with a provider (verbs: a memory region; UCX: a mapped {@code ucp_mem}). A provider counts each
 * region in {@link io.rdmacomm.api.RegisteredMemory} under its name, from registration to its (first) close or its
 * release with the channel.
 */
public interface LocalRegion extends AutoCloseable {

    long address();

    long length();

    /** The region packed for the peer: address, length, access and the provider's remote key. */
    RegionDescriptor descriptor();

    /** Deregisters. Idempotent. */
    @Override
    void close();
}
