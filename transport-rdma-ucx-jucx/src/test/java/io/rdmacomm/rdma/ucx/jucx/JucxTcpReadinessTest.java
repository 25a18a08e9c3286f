package io.rdmacomm.rdma.ucx.jucx;

import io.rdmacomm.testkit.ReadinessContractTest;

/** Serving many connections from one thread, on rdma:// over UCX_TLS=tcp (ucx-jucx). */
class JucxTcpReadinessTest extends ReadinessContractTest {
    JucxTcpReadinessTest() {
        super(JucxTestHooks.tcpTransport());
    }
}
