package io.rdmacomm.tcp;

import io.rdmacomm.testkit.CommunicatorContractTest;
import io.rdmacomm.testkit.TransportUnderTest;

class TcpContractTest extends CommunicatorContractTest {
    TcpContractTest() {
        super(TransportUnderTest.of("tcp://127.0.0.1:0"));
    }
}
