package io.rdmacomm.testkit.local;

import io.rdmacomm.testkit.CommunicatorContractTest;
import io.rdmacomm.testkit.TransportUnderTest;

class LocalContractTest extends CommunicatorContractTest {
    LocalContractTest() {
        super(TransportUnderTest.local());
    }
}
