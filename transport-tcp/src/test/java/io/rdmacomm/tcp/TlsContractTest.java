package io.rdmacomm.tcp;

import io.rdmacomm.testkit.CommunicatorContractTest;
import io.rdmacomm.testkit.TransportUnderTest;

/** The contract over TLS (blocking channels) on BoringSSL ({@code tlsEngine=openssl}). */
class TlsContractTest extends CommunicatorContractTest {
    TlsContractTest() {
        super(TransportUnderTest.of(TestPki.get().serverUri(TestPki.CONTRACT_OPTIONS + "&tlsEngine=openssl")));
    }
}
