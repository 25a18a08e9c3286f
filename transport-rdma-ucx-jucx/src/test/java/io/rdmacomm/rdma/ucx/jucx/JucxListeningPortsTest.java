package io.rdmacomm.rdma.ucx.jucx;

import io.rdmacomm.testkit.ListeningPortsContractTest;

/** {@link ListeningPortsContractTest} for rdma:// on ucx-jucx over UCX's default transports. */
class JucxListeningPortsTest extends ListeningPortsContractTest {
    JucxListeningPortsTest() {
        super("rdma://127.0.0.1:0?provider=ucx-jucx");
    }
}
