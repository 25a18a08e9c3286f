package io.rdmacomm.tcp;

import io.rdmacomm.api.EndpointOption;
import io.rdmacomm.testkit.RemoteMemoryContractTest;
import io.rdmacomm.testkit.TransportUnderTest;

/** Remote memory on non-blocking channels. */
class TcpBusyPollRemoteMemoryContractTest extends RemoteMemoryContractTest {
    TcpBusyPollRemoteMemoryContractTest() {
        super(TransportUnderTest.of("tcp://127.0.0.1:0").withOption(EndpointOption.BUSY_POLL, "50us"));
    }
}
