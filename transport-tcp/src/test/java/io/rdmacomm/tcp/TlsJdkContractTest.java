package io.rdmacomm.tcp;

import io.rdmacomm.testkit.CommunicatorContractTest;
import io.rdmacomm.testkit.TransportUnderTest;

/** The contract over TLS on the JDK's engine ({@code tlsEngine=jdk}; {@link TlsContractTest} runs BoringSSL). */
class TlsJdkContractTest extends CommunicatorContractTest {
    TlsJdkContractTest() {
        super(TransportUnderTest.of(TestPki.get().serverUri(TestPki.CONTRACT_OPTIONS + "&tlsEngine=jdk")));
    }
}
