package io.rdmacomm.rdma.verbs;

import io.rdmacomm.testkit.TransportUnderTest;

/**
 * The contract kit's hooks for {@code rdma://...?provider=verbs}: servers on {@code rdmacomm.verbs.host} (default
 * 127.0.0.1, which rdma-cm maps to the first RDMA device; give an address of an RDMA interface where that does not
 * work); raw connections and silent servers are the kit's plain sockets, since the engine's bootstrap port is TCP.
 */
final class VerbsTestHooks {
    private VerbsTestHooks() {
    }

    static String host() {
        return System.getProperty("rdmacomm.verbs.host", "127.0.0.1");
    }

    /** The kit's transport for rdma:// with verbs; raw connections and silent servers are the kit's sockets. */
    static TransportUnderTest transport() {
        return TransportUnderTest.of("rdma://" + host() + ":0?provider=verbs")
                .withSkipReason(() -> new VerbsProvider().unavailabilityCause());
    }
}
