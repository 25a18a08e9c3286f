package io.rdmacomm.rdma.ucx.ffm;

import io.rdmacomm.testkit.PeerSilenceContractTest;
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * {@link PeerSilenceContractTest} for rdma:// on ucx-ffm with oneSided=trusted (both JVMs: the peer connects to the
 * server's endpoint, options included) and UCX_TLS=tcp (the surefire execution "ucx-tcp"): writes are puts, a flush
 * and a notification, and a put's flush needs the stopped peer's answer, so only readTimeout (or liveness) ends the
 * write that waits for it. (On UCX shared memory the writer places a put itself: a stopped peer shows as missing
 * credit, as without one-sided access.)
 */
@EnabledIfEnvironmentVariable(named = "UCX_TLS", matches = "tcp")
@ExtendWith(FfmTrustedPuts.class)
class FfmTcpTrustedPeerSilenceTest extends PeerSilenceContractTest {
    FfmTcpTrustedPeerSilenceTest() {
        super(FfmTestHooks.TRUSTED_URI);
    }
}
