package io.rdmacomm.rdma.ucx.ffm;

import io.rdmacomm.rdma.HostilePeerContractTest;

/** {@link FfmHostilePeerTest} over UCX_TLS=tcp. */
class FfmTcpHostilePeerTest extends HostilePeerContractTest {
    FfmTcpHostilePeerTest() {
        super(FfmTestHooks.tcpTransport());
    }
}
