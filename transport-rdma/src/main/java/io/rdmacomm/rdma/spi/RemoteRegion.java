package io.rdmacomm.rdma.spi;

import io.rdmacomm.api.RegionDescriptor;

/** A peer's region unpacked for one channel (verbs: rkey and address; UCX: an unpacked {@code ucp_rkey}). */
public interface RemoteRegion extends AutoCloseable {

    RegionDescriptor descriptor();

    /** Releases the unpacked key. Idempotent. */
    @Override
    void close();
}
