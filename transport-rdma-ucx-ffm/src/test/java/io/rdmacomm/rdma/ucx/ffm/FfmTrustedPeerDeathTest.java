package io.rdmacomm.rdma.ucx.ffm;

import io.rdmacomm.testkit.PeerDeathContractTest;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * {@link PeerDeathContractTest} for rdma:// on ucx-ffm with oneSided=trusted (both JVMs: the peer connects to the
 * server's endpoint, options included) over UCX's default transports.
 */
@ExtendWith(FfmTrustedPuts.class)
class FfmTrustedPeerDeathTest extends PeerDeathContractTest {
    FfmTrustedPeerDeathTest() {
        super(FfmTestHooks.TRUSTED_URI);
    }
}
