package io.rdmacomm.rdma.ucx.ffm;

import io.rdmacomm.testkit.CommunicatorContractTest;

/** The communicator contract for rdma:// on ucx-ffm over UCX's default transports (shared memory on one host). */
class FfmContractTest extends CommunicatorContractTest {
    FfmContractTest() {
        super(FfmTestHooks.transport());
    }
}
