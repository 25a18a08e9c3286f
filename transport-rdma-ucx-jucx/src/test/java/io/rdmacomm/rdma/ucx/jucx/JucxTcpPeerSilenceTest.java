package io.rdmacomm.rdma.ucx.jucx;

import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;

/**
 * {@link JucxPeerSilenceTest} with UCX_TLS=tcp (the surefire execution "ucx-tcp"); both JVMs inherit it. A stopped
 * process's kernel still acknowledges UCX's TCP traffic, so only liveness notices it.
 */
@EnabledIfEnvironmentVariable(named = "UCX_TLS", matches = "tcp")
class JucxTcpPeerSilenceTest extends JucxPeerSilenceTest {
}
