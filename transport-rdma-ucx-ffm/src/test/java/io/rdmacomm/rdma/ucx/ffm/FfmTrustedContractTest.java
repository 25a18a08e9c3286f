package io.rdmacomm.rdma.ucx.ffm;

import io.rdmacomm.testkit.CommunicatorContractTest;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The communicator contract for rdma:// on ucx-ffm with oneSided=trusted over UCX's default transports (shared memory
 * on one host): writes are put, flush and notification, as on an RDMA device ({@link FfmTrustedPuts} checks that puts
 * were issued).
 */
@ExtendWith(FfmTrustedPuts.class)
class FfmTrustedContractTest extends CommunicatorContractTest {
    FfmTrustedContractTest() {
        super(FfmTestHooks.trustedTransport());
    }
}
