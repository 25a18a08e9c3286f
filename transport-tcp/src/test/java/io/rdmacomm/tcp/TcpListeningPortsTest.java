package io.rdmacomm.tcp;

import io.rdmacomm.testkit.ListeningPortsContractTest;

/** {@link ListeningPortsContractTest} for tcp://. */
class TcpListeningPortsTest extends ListeningPortsContractTest {
    TcpListeningPortsTest() {
        super("tcp://127.0.0.1:0?readTimeout=30s");
    }
}
