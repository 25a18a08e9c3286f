package io.rdmacomm.rdma.ucx.ffm;

import io.rdmacomm.testkit.ListeningPortsContractTest;

/** {@link ListeningPortsContractTest} for rdma:// on ucx-ffm over UCX_TLS=tcp (this class's fork). */
class FfmTcpListeningPortsTest extends ListeningPortsContractTest {
    FfmTcpListeningPortsTest() {
        super("rdma://127.0.0.1:0?provider=ucx-ffm");
    }
}
