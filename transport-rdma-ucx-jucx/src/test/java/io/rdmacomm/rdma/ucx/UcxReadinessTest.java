package io.rdmacomm.rdma.ucx;

import io.rdmacomm.testkit.ReadinessContractTest;

/** Serving many connections from one thread, on rdma:// over UCX's default transports (ucx-jucx). */
class UcxReadinessTest extends ReadinessContractTest {
    UcxReadinessTest() {
        super(UcxTestHooks.transport());
    }
}
