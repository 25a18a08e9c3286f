package io.rdmacomm.tcp;

import io.rdmacomm.testkit.ReadinessContractTest;
import io.rdmacomm.testkit.TransportUnderTest;

/** Serving many connections from one thread, on tcp:// with TLS. */
class TlsReadinessContractTest extends ReadinessContractTest {
    TlsReadinessContractTest() {
        super(TransportUnderTest.of(TestPki.get().serverUri(TestPki.CONTRACT_OPTIONS)));
    }
}
