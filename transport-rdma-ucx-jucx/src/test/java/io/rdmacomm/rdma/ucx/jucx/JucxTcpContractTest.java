package io.rdmacomm.rdma.ucx.jucx;

import io.rdmacomm.testkit.CommunicatorContractTest;

/** The communicator contract for rdma:// over UCX_TLS=tcp. */
class JucxTcpContractTest extends CommunicatorContractTest {
    JucxTcpContractTest() {
        super(JucxTestHooks.tcpTransport());
    }
}
