package io.rdmacomm.rdma.ucx.jucx;

import io.rdmacomm.testkit.RemoteMemoryContractTest;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The remote-memory contract for rdma:// on ucx-jucx with oneSided=trusted over UCX's default transports (shared
 * memory on one host): writes are put, flush and notification, as on an RDMA device
 * ({@link JucxTrustedPuts} checks that puts were issued).
 */
@ExtendWith(JucxTrustedPuts.class)
class JucxTrustedRemoteMemoryContractTest extends RemoteMemoryContractTest {
    JucxTrustedRemoteMemoryContractTest() {
        super(JucxTestHooks.trustedTransport());
    }
}
