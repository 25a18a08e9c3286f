package io.rdmacomm.rdma.ucx.jucx;

import io.rdmacomm.testkit.PeerDeathContractTest;

/** {@link PeerDeathContractTest} for rdma:// on ucx-jucx over UCX's default transports. */
class JucxPeerDeathTest extends PeerDeathContractTest {
    JucxPeerDeathTest() {
        super("rdma://127.0.0.1:0?provider=ucx-jucx");
    }
}
