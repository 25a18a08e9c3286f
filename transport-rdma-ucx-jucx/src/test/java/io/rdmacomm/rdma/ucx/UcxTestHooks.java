package io.rdmacomm.rdma.ucx;

import io.rdmacomm.rdma.spi.RawByteChannel;
import io.rdmacomm.testkit.TransportUnderTest;
import java.util.Optional;

/** The contract kits' hooks for rdma:// over UCX through JUCX. */
final class UcxTestHooks {
    private UcxTestHooks() {
    }

    /** The kit's transport for rdma:// with ucx-jucx, whose raw connections skip the rdmacomm handshake. */
    static TransportUnderTest transport() {
        return TransportUnderTest.of("rdma://127.0.0.1:0?provider=ucx-jucx")
                .withRawConnector(served -> RawByteChannel.connect(new UcxProvider(), served.socketAddress()));
    }

    /** Same, but only where UCX_TLS=tcp is in the environment (the surefire execution "ucx-tcp" sets it). */
    static TransportUnderTest tcpTransport() {
        return transport().withSkipReason(() -> "tcp".equals(System.getenv("UCX_TLS")) ? Optional.empty()
                : Optional.of("UCX_TLS=tcp is not set; run through the surefire execution ucx-tcp"));
    }
}
