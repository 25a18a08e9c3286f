package io.rdmacomm.rdma.ucx.ffm;

import io.rdmacomm.testkit.HostileInputs;
import io.rdmacomm.testkit.HostileInputsContractTest;

/**
 * {@link HostileInputsContractTest} at an rdma:// server on ucx-ffm: its port is the engine's bootstrap socket, so
 * nothing reaches UCX; accept, bootstrap watch and one progress thread per side, not one per connection.
 */
class FfmHostileInputsTest extends HostileInputsContractTest {
    FfmHostileInputsTest() {
        super(FfmTestHooks.URI, HostileInputs.RDMA_BOOTSTRAP_HEADER, "rdmacomm-rdma-", 8);
    }
}
