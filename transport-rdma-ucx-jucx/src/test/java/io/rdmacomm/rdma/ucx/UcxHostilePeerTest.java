package io.rdmacomm.rdma.ucx;

import io.rdmacomm.rdma.HostilePeerContractTest;

/** A client bypassing its engine, against an rdma:// server on ucx-jucx over UCX's default transports (shm). */
class UcxHostilePeerTest extends HostilePeerContractTest {
    UcxHostilePeerTest() {
        super(UcxTestHooks.transport());
    }
}
