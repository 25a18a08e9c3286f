package io.rdmacomm.rdma.ucx.ffm;

import io.rdmacomm.testkit.ReadinessContractTest;

/** Serving many connections from one thread, on rdma:// over UCX's default transports (ucx-ffm). */
class FfmReadinessTest extends ReadinessContractTest {
    FfmReadinessTest() {
        super(FfmTestHooks.transport());
    }
}
