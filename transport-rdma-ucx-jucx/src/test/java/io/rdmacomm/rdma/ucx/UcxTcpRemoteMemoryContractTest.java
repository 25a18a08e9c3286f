package io.rdmacomm.rdma.ucx;

import io.rdmacomm.testkit.RemoteMemoryContractTest;

/** The remote-memory contract for rdma:// over UCX_TLS=tcp. */
class UcxTcpRemoteMemoryContractTest extends RemoteMemoryContractTest {
    UcxTcpRemoteMemoryContractTest() {
        super(UcxTestHooks.tcpTransport());
    }
}
