package io.rdmacomm.rdma.ucx.ffm;

import io.rdmacomm.testkit.PeerDeathContractTest;

/** {@link PeerDeathContractTest} for rdma:// on ucx-ffm over UCX's default transports. */
class FfmPeerDeathTest extends PeerDeathContractTest {
    FfmPeerDeathTest() {
        super(FfmTestHooks.URI);
    }
}
