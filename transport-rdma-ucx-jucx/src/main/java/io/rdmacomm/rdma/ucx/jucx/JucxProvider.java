package io.rdmacomm.rdma.ucx.jucx;

import io.rdmacomm.rdma.ucx.NodeRegistry;
import io.rdmacomm.rdma.ucx.UcxProvider;
import java.util.Optional;

/**
 * The {@code ucx-jucx} RDMA provider, which {@code provider=ucx} selects where {@code ucx-ffm} cannot run: JUCX over the system's libucx, using whatever UCX finds (InfiniBand/RoCE verbs,
 * shared memory, tcp; restrict it with {@code UCX_TLS}). One node (context, worker, progress thread) per interface,
 * side (client, server) and process, shared by all connections of that side; endpoints are created from the peer's worker address, which the
 * engine's bootstrap carries. UCX's own connection manager and listener are not used.
 */
public final class JucxProvider extends UcxProvider<JucxNode> {
    /**
     * The process's nodes by side and UCX_NET_DEVICES value ("" for UCX's choice). One per side, not one for both:
     * with a client and a server in one process on one worker, UCX_TLS=tcp crashed in ucp_am_send_nbx (SIGSEGV,
     * contract kit's 64 peers), and the self transport's messages did not wake the sleeping worker.
     */
    private static final NodeRegistry<JucxNode> NODES = new NodeRegistry<>();

    /** A provider; its nodes are the process's, kept in a static registry. */
    public JucxProvider() {
        super(NODES, JucxNode::new, "UCX could not create a worker");
    }

    @Override
    public String name() {
        return "ucx-jucx";
    }

    /** Measured 1 per connection (UCX's tcp socket) on UCX's default transports and on {@code UCX_TLS=tcp}. */
    @Override
    public int descriptorsPerChannel() {
        return 1;
    }

    @Override
    public Optional<String> unavailabilityCause() {
        return JucxRuntime.unavailabilityCause();
    }
}
