package io.rdmacomm.tcp;

import io.rdmacomm.testkit.RemoteMemoryContractTest;
import io.rdmacomm.testkit.TransportUnderTest;

class TcpRemoteMemoryContractTest extends RemoteMemoryContractTest {
    TcpRemoteMemoryContractTest() {
        super(TransportUnderTest.of("tcp://127.0.0.1:0"));
    }
}
