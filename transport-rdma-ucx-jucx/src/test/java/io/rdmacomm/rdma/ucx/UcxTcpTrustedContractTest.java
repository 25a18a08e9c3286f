package io.rdmacomm.rdma.ucx;

import io.rdmacomm.testkit.CommunicatorContractTest;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The communicator contract for rdma:// on ucx-jucx with oneSided=trusted over UCX_TLS=tcp: writes are put, flush and
 * notification, as on an RDMA device
 * ({@link UcxTrustedPuts} checks that puts were issued).
 */
@ExtendWith(UcxTrustedPuts.class)
class UcxTcpTrustedContractTest extends CommunicatorContractTest {
    UcxTcpTrustedContractTest() {
        super(UcxTestHooks.trustedTcpTransport());
    }
}
