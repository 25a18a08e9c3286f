package io.rdmacomm.testkit.local;

import io.rdmacomm.testkit.CommunicatorContractTest;
import io.rdmacomm.testkit.Faults;
import io.rdmacomm.testkit.TransportUnderTest;

/** The stream contract with every read cut short: the kit's own readers must cope with short reads. */
class LocalShortReadsContractTest extends CommunicatorContractTest {
    LocalShortReadsContractTest() {
        super(TransportUnderTest.local().withWrapper(c -> Faults.shortReads(c, 997)));
    }
}
