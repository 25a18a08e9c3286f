package io.rdmacomm.rdma.ucx.jucx;

import io.rdmacomm.testkit.CommunicatorContractTest;

/** The communicator contract for rdma:// over UCX's default transports (shared memory on one host). */
class JucxContractTest extends CommunicatorContractTest {
    JucxContractTest() {
        super(JucxTestHooks.transport());
    }
}
