package io.rdmacomm.rdma.ucx.jucx;

import io.rdmacomm.testkit.RemoteMemoryContractTest;

/** The remote-memory contract for rdma:// over UCX_TLS=tcp. */
class JucxTcpRemoteMemoryContractTest extends RemoteMemoryContractTest {
    JucxTcpRemoteMemoryContractTest() {
        super(JucxTestHooks.tcpTransport());
    }
}
