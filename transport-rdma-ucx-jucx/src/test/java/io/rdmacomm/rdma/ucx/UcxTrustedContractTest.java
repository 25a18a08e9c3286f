package io.rdmacomm.rdma.ucx;

import io.rdmacomm.testkit.CommunicatorContractTest;

/**
 * The communicator contract for rdma:// on ucx-jucx with oneSided=trusted over UCX's default transports (shared memory
 * on one host): writes are put, flush and notification, as on an RDMA device.
 */
class UcxTrustedContractTest extends CommunicatorContractTest {
    UcxTrustedContractTest() {
        super(UcxTestHooks.trustedTransport());
    }
}
