package io.rdmacomm.rdma.ucx;

import io.rdmacomm.rdma.spi.RdmaNode;

/** A UCX node whose channels share one endpoint per peer process ({@link SharedEndpoints}): it counts its peers. */
public interface SharedEndpointsNode extends RdmaNode {

    /** The node's endpoints, one per peer node address. */
    SharedEndpoints<?, ?> endpoints();

    @Override
    default int peers() {
        return endpoints().peers();
    }

    @Override
    default boolean reaches(byte[] peerAddress) {
        return endpoints().has(peerAddress);
    }
}
