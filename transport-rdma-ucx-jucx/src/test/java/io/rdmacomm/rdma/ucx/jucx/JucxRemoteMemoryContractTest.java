package io.rdmacomm.rdma.ucx.jucx;

import io.rdmacomm.testkit.RemoteMemoryContractTest;

/** The remote-memory contract for rdma:// over UCX's default transports (shared memory on one host). */
class JucxRemoteMemoryContractTest extends RemoteMemoryContractTest {
    JucxRemoteMemoryContractTest() {
        super(JucxTestHooks.transport());
    }
}
