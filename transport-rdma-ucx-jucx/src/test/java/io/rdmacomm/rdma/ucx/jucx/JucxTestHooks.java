package io.rdmacomm.rdma.ucx.jucx;

import io.rdmacomm.api.EndpointOption;
import io.rdmacomm.testkit.TransportUnderTest;
import java.util.Optional;

/** The contract kits' hooks for rdma:// over UCX through JUCX. */
final class JucxTestHooks {
    private JucxTestHooks() {
    }

    /**
     * The kit's transport for rdma:// with ucx-jucx; raw connections are the kit's default plain sockets, since the
     * engine's bootstrap port is a TCP socket.
     */
    static TransportUnderTest transport() {
        return TransportUnderTest.of("rdma://127.0.0.1:0?provider=ucx-jucx");
    }

    /** Same, but only where UCX_TLS=tcp is in the environment (the surefire execution "ucx-tcp" sets it). */
    static TransportUnderTest tcpTransport() {
        return onlyWithTcp(transport());
    }

    /** {@link #transport()} with oneSided=trusted on every endpoint the kit serves on or connects to. */
    static TransportUnderTest trustedTransport() {
        return transport().withOption(EndpointOption.ONE_SIDED, "trusted");
    }

    /** {@link #trustedTransport()}, only where UCX_TLS=tcp is in the environment. */
    static TransportUnderTest trustedTcpTransport() {
        return onlyWithTcp(trustedTransport());
    }

    private static TransportUnderTest onlyWithTcp(TransportUnderTest t) {
        return t.withSkipReason(() -> "tcp".equals(System.getenv("UCX_TLS")) ? Optional.empty()
                : Optional.of("UCX_TLS=tcp is not set; run through the surefire execution ucx-tcp"));
    }
}
