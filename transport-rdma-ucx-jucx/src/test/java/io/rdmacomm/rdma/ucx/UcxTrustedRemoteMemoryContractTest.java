package io.rdmacomm.rdma.ucx;

import io.rdmacomm.testkit.RemoteMemoryContractTest;

/**
 * The remote-memory contract for rdma:// on ucx-jucx with oneSided=trusted over UCX's default transports (shared
 * memory on one host): writes are put, flush and notification, as on an RDMA device.
 */
class UcxTrustedRemoteMemoryContractTest extends RemoteMemoryContractTest {
    UcxTrustedRemoteMemoryContractTest() {
        super(UcxTestHooks.trustedTransport());
    }
}
