package io.rdmacomm.tcp;

import io.rdmacomm.testkit.CommunicatorContractTest;
import io.rdmacomm.testkit.TransportUnderTest;

/** The contract over TLS (blocking channels). */
class TlsContractTest extends CommunicatorContractTest {
    TlsContractTest() {
        super(TransportUnderTest.of(TestPki.get().serverUri(TestPki.CONTRACT_OPTIONS)));
    }
}
