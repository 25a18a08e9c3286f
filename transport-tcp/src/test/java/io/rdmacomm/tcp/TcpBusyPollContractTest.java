package io.rdmacomm.tcp;

import io.rdmacomm.api.EndpointOption;
import io.rdmacomm.testkit.CommunicatorContractTest;
import io.rdmacomm.testkit.TransportUnderTest;

/** The contract on non-blocking channels (busy polling, then selector waits). */
class TcpBusyPollContractTest extends CommunicatorContractTest {
    TcpBusyPollContractTest() {
        super(TransportUnderTest.of("tcp://127.0.0.1:0").withOption(EndpointOption.BUSY_POLL, "50us"));
    }
}
