package io.rdmacomm.rdma.ucx;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;

/** {@link UcxPeerDeathTest} with UCX_TLS=tcp (the surefire execution "ucx-tcp"); both JVMs inherit it. */
@EnabledIfEnvironmentVariable(named = "UCX_TLS", matches = "tcp")
class UcxTcpPeerDeathTest extends UcxPeerDeathTest {
    @BeforeEach
    void onTcp() {
        org.junit.jupiter.api.Assertions.assertEquals("tcp", System.getenv("UCX_TLS"));
    }
}
