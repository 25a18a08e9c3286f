package io.rdmacomm.rdma.spi;

import io.rdmacomm.api.RegionDescriptor;

/** Memory registered with a provider (verbs: a memory region; UCX: a mapped {@code ucp_mem}). */
public interface LocalRegion extends AutoCloseable {

    long address();

    long length();

    /** The region packed for the peer: address, length, access and the provider's remote key. */
    RegionDescriptor descriptor();

    /** Deregisters. Idempotent. */
    @Override
    void close();
}
