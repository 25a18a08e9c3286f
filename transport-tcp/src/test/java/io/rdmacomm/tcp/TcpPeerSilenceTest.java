package io.rdmacomm.tcp;

import io.rdmacomm.testkit.PeerSilenceContractTest;

/** {@link PeerSilenceContractTest} for tcp://. */
class TcpPeerSilenceTest extends PeerSilenceContractTest {
    TcpPeerSilenceTest() {
        super("tcp://127.0.0.1:0?sendBuffer=64k");
    }
}
