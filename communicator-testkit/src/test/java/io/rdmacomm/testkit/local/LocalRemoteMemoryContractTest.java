package io.rdmacomm.testkit.local;

import io.rdmacomm.testkit.RemoteMemoryContractTest;
import io.rdmacomm.testkit.TransportUnderTest;

class LocalRemoteMemoryContractTest extends RemoteMemoryContractTest {
    LocalRemoteMemoryContractTest() {
        super(TransportUnderTest.local());
    }
}
