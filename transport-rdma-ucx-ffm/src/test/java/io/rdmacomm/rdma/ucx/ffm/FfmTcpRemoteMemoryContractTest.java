package io.rdmacomm.rdma.ucx.ffm;

import io.rdmacomm.testkit.RemoteMemoryContractTest;

/** The remote-memory contract for rdma:// on ucx-ffm over UCX_TLS=tcp. */
class FfmTcpRemoteMemoryContractTest extends RemoteMemoryContractTest {
    FfmTcpRemoteMemoryContractTest() {
        super(FfmTestHooks.tcpTransport());
    }
}
