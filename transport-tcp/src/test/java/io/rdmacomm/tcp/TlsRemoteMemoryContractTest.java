package io.rdmacomm.tcp;

import io.rdmacomm.testkit.RemoteMemoryContractTest;
import io.rdmacomm.testkit.TransportUnderTest;

/** The remote-memory contract over TLS (blocking channels). */
class TlsRemoteMemoryContractTest extends RemoteMemoryContractTest {
    TlsRemoteMemoryContractTest() {
        super(TransportUnderTest.of(TestPki.get().serverUri(TestPki.CONTRACT_OPTIONS)));
    }
}
