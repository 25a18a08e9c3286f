package io.rdmacomm.rdma.ucx.jucx;

import io.rdmacomm.testkit.HostileInputs;
import io.rdmacomm.testkit.HostileInputsContractTest;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;

/**
 * {@link HostileInputsContractTest} at an rdma:// server on ucx-jucx: its port is the engine's bootstrap socket, so
 * nothing reaches UCX; accept, bootstrap watch and one progress thread per side, not one per connection.
 * {@code JucxTcpHostileInputsTest} runs the same with UCX_TLS=tcp.
 */
class JucxHostileInputsTest extends HostileInputsContractTest {
    JucxHostileInputsTest() {
        super("rdma://127.0.0.1:0?provider=ucx-jucx", HostileInputs.RDMA_BOOTSTRAP_HEADER, "rdmacomm-rdma-", 8);
    }

    @BeforeEach
    void assumeTransport() {
        Assumptions.assumeTrue(JucxRuntime.unavailabilityCause().isEmpty(), "UCX is not available");
    }
}
