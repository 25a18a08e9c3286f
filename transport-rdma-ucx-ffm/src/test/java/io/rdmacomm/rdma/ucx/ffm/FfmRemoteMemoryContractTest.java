package io.rdmacomm.rdma.ucx.ffm;

import io.rdmacomm.testkit.RemoteMemoryContractTest;

/** The remote-memory contract for rdma:// on ucx-ffm over UCX's default transports. */
class FfmRemoteMemoryContractTest extends RemoteMemoryContractTest {
    FfmRemoteMemoryContractTest() {
        super(FfmTestHooks.transport());
    }
}
