package io.rdmacomm.tcp;

import io.rdmacomm.testkit.RemoteMemoryContractTest;
import io.rdmacomm.testkit.TransportUnderTest;

/** The remote-memory contract over TLS on non-blocking channels (busy polling, then selector waits). */
class TlsBusyPollRemoteMemoryContractTest extends RemoteMemoryContractTest {
    TlsBusyPollRemoteMemoryContractTest() {
        super(TransportUnderTest.of(TestPki.get().serverUri(TestPki.CONTRACT_OPTIONS + "&busyPoll=50us")));
    }
}
