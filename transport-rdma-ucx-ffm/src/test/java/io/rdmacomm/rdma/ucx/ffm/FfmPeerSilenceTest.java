package io.rdmacomm.rdma.ucx.ffm;

import io.rdmacomm.testkit.PeerSilenceContractTest;

/** {@link PeerSilenceContractTest} for rdma:// on ucx-ffm over UCX's default transports. */
class FfmPeerSilenceTest extends PeerSilenceContractTest {
    FfmPeerSilenceTest() {
        super(FfmTestHooks.URI);
    }
}
