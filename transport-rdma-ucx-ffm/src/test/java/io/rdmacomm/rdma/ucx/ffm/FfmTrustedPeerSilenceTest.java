package io.rdmacomm.rdma.ucx.ffm;

import io.rdmacomm.testkit.PeerSilenceContractTest;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * {@link PeerSilenceContractTest} for rdma:// on ucx-ffm with oneSided=trusted (both JVMs: the peer connects to the
 * server's endpoint, options included) over UCX's default transports: writes are puts, a flush and a notification.
 */
@ExtendWith(FfmTrustedPuts.class)
class FfmTrustedPeerSilenceTest extends PeerSilenceContractTest {
    FfmTrustedPeerSilenceTest() {
        super(FfmTestHooks.TRUSTED_URI);
    }
}
