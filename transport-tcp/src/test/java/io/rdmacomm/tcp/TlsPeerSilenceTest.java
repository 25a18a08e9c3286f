package io.rdmacomm.tcp;

import io.rdmacomm.testkit.PeerSilenceContractTest;

/** {@link PeerSilenceContractTest} over TLS: heartbeats are TLS records like any frame. */
class TlsPeerSilenceTest extends PeerSilenceContractTest {
    TlsPeerSilenceTest() {
        super(TestPki.get().serverUri(TestPki.CONTRACT_OPTIONS + "&sendBuffer=64k"));
    }
}
