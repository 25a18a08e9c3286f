package io.rdmacomm.tcp;

import io.rdmacomm.testkit.CommunicatorContractTest;
import io.rdmacomm.testkit.TransportUnderTest;

/** The contract over TLS on non-blocking channels (busy polling, then selector waits). */
class TlsBusyPollContractTest extends CommunicatorContractTest {
    TlsBusyPollContractTest() {
        super(TransportUnderTest.of(TestPki.get().serverUri(TestPki.CONTRACT_OPTIONS + "&busyPoll=50us")));
    }
}
