package io.rdmacomm.rdma.ucx;

import io.rdmacomm.testkit.ReadinessContractTest;

/** Serving many connections from one thread, on rdma:// over UCX_TLS=tcp (ucx-jucx). */
class UcxTcpReadinessTest extends ReadinessContractTest {
    UcxTcpReadinessTest() {
        super(UcxTestHooks.tcpTransport());
    }
}
