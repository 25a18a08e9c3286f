package io.rdmacomm.rdma.ucx.jucx;

import io.rdmacomm.testkit.ReadinessContractTest;

/** Serving many connections from one thread, on rdma:// over UCX's default transports (ucx-jucx). */
class JucxReadinessTest extends ReadinessContractTest {
    JucxReadinessTest() {
        super(JucxTestHooks.transport());
    }
}
