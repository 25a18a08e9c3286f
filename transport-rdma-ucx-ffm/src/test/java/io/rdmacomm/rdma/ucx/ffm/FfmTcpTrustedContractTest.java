package io.rdmacomm.rdma.ucx.ffm;

import io.rdmacomm.testkit.CommunicatorContractTest;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The communicator contract for rdma:// on ucx-ffm with oneSided=trusted over UCX_TLS=tcp: writes are put, flush and
 * notification, as on an RDMA device ({@link FfmTrustedPuts} checks that puts were issued).
 */
@ExtendWith(FfmTrustedPuts.class)
class FfmTcpTrustedContractTest extends CommunicatorContractTest {
    FfmTcpTrustedContractTest() {
        super(FfmTestHooks.trustedTcpTransport());
    }
}
