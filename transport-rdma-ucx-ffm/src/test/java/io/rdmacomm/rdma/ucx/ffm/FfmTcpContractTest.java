package io.rdmacomm.rdma.ucx.ffm;

import io.rdmacomm.testkit.CommunicatorContractTest;

/** The communicator contract for rdma:// on ucx-ffm over UCX_TLS=tcp. */
class FfmTcpContractTest extends CommunicatorContractTest {
    FfmTcpContractTest() {
        super(FfmTestHooks.tcpTransport());
    }
}
