package io.rdmacomm.rdma.ucx;

import io.rdmacomm.testkit.CommunicatorContractTest;

/** The communicator contract for rdma:// over UCX_TLS=tcp. */
class UcxTcpContractTest extends CommunicatorContractTest {
    UcxTcpContractTest() {
        super(UcxTestHooks.tcpTransport());
    }
}
