package io.rdmacomm.rdma.ucx.ffm;

import io.rdmacomm.testkit.ListeningPortsContractTest;

/** {@link ListeningPortsContractTest} for rdma:// on ucx-ffm over UCX's default transports. */
class FfmListeningPortsTest extends ListeningPortsContractTest {
    FfmListeningPortsTest() {
        super("rdma://127.0.0.1:0?provider=ucx-ffm");
    }
}
