package io.rdmacomm.rdma.verbs;

import io.rdmacomm.testkit.PeerSilenceContractTest;
import org.junit.jupiter.api.extension.ExtendWith;

/** {@link PeerSilenceContractTest} for rdma:// on verbs; skipped, with the reason, where no RDMA device is usable. */
@ExtendWith(VerbsRunsHere.class)
class VerbsPeerSilenceTest extends PeerSilenceContractTest {
    VerbsPeerSilenceTest() {
        super("rdma://" + VerbsTestHooks.host() + ":0?provider=verbs");
    }
}
