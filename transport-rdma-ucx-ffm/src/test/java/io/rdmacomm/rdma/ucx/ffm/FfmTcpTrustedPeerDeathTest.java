package io.rdmacomm.rdma.ucx.ffm;

import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;

/** {@link FfmTrustedPeerDeathTest} with UCX_TLS=tcp (the surefire execution "ucx-tcp"); both JVMs inherit it. */
@EnabledIfEnvironmentVariable(named = "UCX_TLS", matches = "tcp")
class FfmTcpTrustedPeerDeathTest extends FfmTrustedPeerDeathTest {
}
