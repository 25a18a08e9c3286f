package io.rdmacomm.rdma.ucx.jucx;

import io.rdmacomm.testkit.PeerSilenceContractTest;

/** {@link PeerSilenceContractTest} for rdma:// on ucx-jucx over UCX's default transports. */
class JucxPeerSilenceTest extends PeerSilenceContractTest {
    JucxPeerSilenceTest() {
        super("rdma://127.0.0.1:0?provider=ucx-jucx");
    }
}
