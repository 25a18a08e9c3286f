package io.rdmacomm.rdma.ucx;

import io.rdmacomm.rdma.HostilePeerContractTest;

/** {@link UcxHostilePeerTest} over UCX_TLS=tcp. */
class UcxTcpHostilePeerTest extends HostilePeerContractTest {
    UcxTcpHostilePeerTest() {
        super(UcxTestHooks.tcpTransport());
    }
}
