package io.rdmacomm.rdma.ucx.ffm;

import io.rdmacomm.testkit.ReadinessContractTest;

/** Serving many connections from one thread, on rdma:// over UCX_TLS=tcp (ucx-ffm). */
class FfmTcpReadinessTest extends ReadinessContractTest {
    FfmTcpReadinessTest() {
        super(FfmTestHooks.tcpTransport());
    }
}
