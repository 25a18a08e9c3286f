package io.rdmacomm.rdma.ucx.jucx;

import io.rdmacomm.testkit.ListeningPortsContractTest;

/** {@link ListeningPortsContractTest} for rdma:// on ucx-jucx over UCX_TLS=tcp (this class's fork). */
class JucxTcpListeningPortsTest extends ListeningPortsContractTest {
    JucxTcpListeningPortsTest() {
        super("rdma://127.0.0.1:0?provider=ucx-jucx");
    }
}
