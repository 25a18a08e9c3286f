package io.rdmacomm.rdma.ucx;

import io.rdmacomm.testkit.CommunicatorContractTest;

/** The communicator contract for rdma:// over UCX's default transports (shared memory on one host). */
class UcxContractTest extends CommunicatorContractTest {
    UcxContractTest() {
        super(UcxTestHooks.transport());
    }
}
