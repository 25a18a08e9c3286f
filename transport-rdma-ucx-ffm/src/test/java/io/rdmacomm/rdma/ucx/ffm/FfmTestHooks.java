package io.rdmacomm.rdma.ucx.ffm;

import io.rdmacomm.api.EndpointOption;
import io.rdmacomm.testkit.TransportUnderTest;
import java.util.Optional;

/** The contract kits' hooks for rdma:// on ucx-ffm. */
final class FfmTestHooks {
    static final String URI = "rdma://127.0.0.1:0?provider=ucx-ffm";
    /** {@link #URI} with oneSided=trusted: put, flush and notification on every UCX transport. */
    static final String TRUSTED_URI = URI + "&oneSided=trusted";

    private FfmTestHooks() {
    }

    /**
     * The kit's transport for rdma:// on ucx-ffm; raw connections are the kit's default plain sockets, since the
     * engine's bootstrap port is a TCP socket.
     */
    static TransportUnderTest transport() {
        return TransportUnderTest.of(URI);
    }

    /**
     * The kit's transport for rdma:// on ucx-ffm with oneSided=trusted on every endpoint it serves on or connects to
     * (the silent server's too).
     */
    static TransportUnderTest trustedTransport() {
        return transport().withOption(EndpointOption.ONE_SIDED, "trusted");
    }

    /** {@link #trustedTransport()}, only where UCX_TLS=tcp is in the environment (surefire execution "ucx-tcp"). */
    static TransportUnderTest trustedTcpTransport() {
        return trustedTransport().withSkipReason(() -> "tcp".equals(System.getenv("UCX_TLS")) ? Optional.empty()
                : Optional.of("UCX_TLS=tcp is not set; run through the surefire execution ucx-tcp"));
    }

    /** Same, but only where UCX_TLS=tcp is in the environment (the surefire execution "ucx-tcp" sets it). */
    static TransportUnderTest tcpTransport() {
        return transport().withSkipReason(() -> "tcp".equals(System.getenv("UCX_TLS")) ? Optional.empty()
                : Optional.of("UCX_TLS=tcp is not set; run through the surefire execution ucx-tcp"));
    }
}
