package io.rdmacomm.testkit.local;

import io.rdmacomm.testkit.ReadinessContractTest;
import io.rdmacomm.testkit.TransportUnderTest;

/** Serving many connections from one thread, on local://. */
class LocalReadinessTest extends ReadinessContractTest {
    LocalReadinessTest() {
        super(TransportUnderTest.local());
    }
}
