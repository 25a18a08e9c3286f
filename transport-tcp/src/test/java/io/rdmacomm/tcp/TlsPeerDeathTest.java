package io.rdmacomm.tcp;

import io.rdmacomm.testkit.PeerDeathContractTest;

/** A peer process killed mid-transfer over TLS fails the survivor's blocked read or write (no read timeout set). */
class TlsPeerDeathTest extends PeerDeathContractTest {
    TlsPeerDeathTest() {
        super(TestPki.get().serverUri(TestPki.CONTRACT_OPTIONS));
    }
}
