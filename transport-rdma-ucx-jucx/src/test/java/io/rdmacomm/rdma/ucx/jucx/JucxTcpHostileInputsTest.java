package io.rdmacomm.rdma.ucx.jucx;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;

/** {@link JucxHostileInputsTest} with UCX_TLS=tcp (the surefire execution ucx-tcp). */
class JucxTcpHostileInputsTest extends JucxHostileInputsTest {

    @BeforeEach
    @Override
    void assumeTransport() {
        super.assumeTransport();
        Assumptions.assumeTrue("tcp".equals(System.getenv("UCX_TLS")), "UCX_TLS=tcp is not set; run through the"
                + " surefire execution ucx-tcp");
    }
}
