package io.rdmacomm.rdma.ucx.jucx;

import io.rdmacomm.rdma.HostilePeerContractTest;

/** {@link JucxHostilePeerTest} over UCX_TLS=tcp. */
class JucxTcpHostilePeerTest extends HostilePeerContractTest {
    JucxTcpHostilePeerTest() {
        super(JucxTestHooks.tcpTransport());
    }
}
