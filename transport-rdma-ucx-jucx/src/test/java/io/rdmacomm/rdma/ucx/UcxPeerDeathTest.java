package io.rdmacomm.rdma.ucx;

import io.rdmacomm.testkit.PeerDeathContractTest;

/** {@link PeerDeathContractTest} for rdma:// on ucx-jucx over UCX's default transports. */
class UcxPeerDeathTest extends PeerDeathContractTest {
    UcxPeerDeathTest() {
        super("rdma://127.0.0.1:0?provider=ucx-jucx");
    }
}
