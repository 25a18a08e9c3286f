package io.rdmacomm.rdma.ucx.ffm;

import io.rdmacomm.rdma.HostilePeerContractTest;

/** A client bypassing its engine, against an rdma:// server on ucx-ffm over UCX's default transports (shm). */
class FfmHostilePeerTest extends HostilePeerContractTest {
    FfmHostilePeerTest() {
        super(FfmTestHooks.transport());
    }
}
