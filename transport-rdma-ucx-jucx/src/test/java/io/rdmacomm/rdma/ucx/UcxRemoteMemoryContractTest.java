package io.rdmacomm.rdma.ucx;

import io.rdmacomm.testkit.RemoteMemoryContractTest;

/** The remote-memory contract for rdma:// over UCX's default transports (shared memory on one host). */
class UcxRemoteMemoryContractTest extends RemoteMemoryContractTest {
    UcxRemoteMemoryContractTest() {
        super(UcxTestHooks.transport());
    }
}
