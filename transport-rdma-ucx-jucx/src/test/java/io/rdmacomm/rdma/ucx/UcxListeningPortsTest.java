package io.rdmacomm.rdma.ucx;

import io.rdmacomm.testkit.ListeningPortsContractTest;

/** {@link ListeningPortsContractTest} for rdma:// on ucx-jucx over UCX's default transports. */
class UcxListeningPortsTest extends ListeningPortsContractTest {
    UcxListeningPortsTest() {
        super("rdma://127.0.0.1:0?provider=ucx-jucx");
    }
}
