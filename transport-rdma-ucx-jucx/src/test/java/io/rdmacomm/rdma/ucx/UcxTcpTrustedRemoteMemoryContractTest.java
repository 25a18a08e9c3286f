package io.rdmacomm.rdma.ucx;

import io.rdmacomm.testkit.RemoteMemoryContractTest;

/**
 * The remote-memory contract for rdma:// on ucx-jucx with oneSided=trusted over UCX_TLS=tcp: writes are put, flush and
 * notification, as on an RDMA device.
 */
class UcxTcpTrustedRemoteMemoryContractTest extends RemoteMemoryContractTest {
    UcxTcpTrustedRemoteMemoryContractTest() {
        super(UcxTestHooks.trustedTcpTransport());
    }
}
