package io.rdmacomm.testkit;

import org.junit.jupiter.api.AfterEach;

/**
 * What the kits that put a client in a second JVM share ({@link PeerDeathContractTest},
 * {@link PeerSilenceContractTest}, {@link ListeningPortsContractTest}): the URI the test serves on, and the peer
 * process of the current test, killed and reaped after it.
 */
abstract class PeerProcessKit {
    /** A URI to serve on with port 0 and an explicit query ({@code ...?provider=ucx-ffm}). */
    final String serverUri;
    /** The current test's peer process, if it started one. */
    PeerProcess peer;

    PeerProcessKit(String serverUri) {
        this.serverUri = serverUri;
    }

    @AfterEach
    void killPeer() throws InterruptedException, java.io.IOException {
        if (peer != null) {
            peer.close();
        }
    }
}
