package io.rdmacomm.rdma.ucx;

import io.rdmacomm.testkit.CommunicatorContractTest;

/**
 * The communicator contract for rdma:// on ucx-jucx with oneSided=trusted over UCX_TLS=tcp: writes are put, flush and
 * notification, as on an RDMA device.
 */
class UcxTcpTrustedContractTest extends CommunicatorContractTest {
    UcxTcpTrustedContractTest() {
        super(UcxTestHooks.trustedTcpTransport());
    }
}
