package io.rdmacomm.rdma.ucx.jucx;

import io.rdmacomm.rdma.HostilePeerContractTest;

/** A client bypassing its engine, against an rdma:// server on ucx-jucx over UCX's default transports (shm). */
class JucxHostilePeerTest extends HostilePeerContractTest {
    JucxHostilePeerTest() {
        super(JucxTestHooks.transport());
    }
}
