package io.rdmacomm.rdma.ucx.ffm;

import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;

/**
 * {@link FfmTrustedPeerSilenceTest} with UCX_TLS=tcp (the surefire execution "ucx-tcp"); both JVMs inherit it. A put's
 * flush needs the stopped peer's answer there: only readTimeout (or liveness) ends the write that waits for it.
 */
@EnabledIfEnvironmentVariable(named = "UCX_TLS", matches = "tcp")
class FfmTcpTrustedPeerSilenceTest extends FfmTrustedPeerSilenceTest {
}
