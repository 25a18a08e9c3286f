package io.rdmacomm.tcp;

import io.rdmacomm.testkit.ReadinessContractTest;
import io.rdmacomm.testkit.TransportUnderTest;

/** Serving many connections from one thread, on tcp:// (blocking channels until notifyReadable is first called). */
class TcpReadinessContractTest extends ReadinessContractTest {
    TcpReadinessContractTest() {
        super(TransportUnderTest.of("tcp://127.0.0.1:0"));
    }
}
