package io.rdmacomm.rdma.ucx.jucx;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;

/** {@link JucxPeerDeathTest} with UCX_TLS=tcp (the surefire execution "ucx-tcp"); both JVMs inherit it. */
@EnabledIfEnvironmentVariable(named = "UCX_TLS", matches = "tcp")
class JucxTcpPeerDeathTest extends JucxPeerDeathTest {
    @BeforeEach
    void onTcp() {
        org.junit.jupiter.api.Assertions.assertEquals("tcp", System.getenv("UCX_TLS"));
    }
}
