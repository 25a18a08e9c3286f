package io.rdmacomm.rdma.ucx.ffm;

import io.rdmacomm.rdma.ucx.NodeRegistry;
import io.rdmacomm.rdma.ucx.UcxProvider;
import io.rdmacomm.ucx.ffm.Ucx;
import java.util.Optional;

/**
 * The {@code ucx-ffm} RDMA provider, which {@code provider=ucx} selects wherever it can run (it ranks above
 * {@code ucx-jucx}): UCX through the
 * {@code ucx-ffm} binding, allocation-free on the data path and without JUCX's leaked requests. One {@link FfmNode}
 * per side (client, server) and interface in the process, shared by all connections of that side; endpoints are made
 * from the worker addresses the engine's bootstrap carries. UCX's own listener and connection manager are not used.
 */
public final class FfmProvider extends UcxProvider<FfmNode> {
    /** The process's nodes by side and UCX_NET_DEVICES value ("" for UCX's choice), as ucx-jucx keeps them. */
    private static final NodeRegistry<FfmNode> NODES = new NodeRegistry<>();

    /** A provider; its nodes are the process's, kept in a static registry. */
    public FfmProvider() {
        super(NODES, FfmNode::new, "UCX (ucx-ffm) could not start");
    }

    @Override
    public String name() {
        return FFM;
    }

    /** Above ucx-jucx (5): {@code provider=ucx} runs on ucx-ffm wherever it can. */
    @Override
    public int priority() {
        return 7;
    }

    /**
     * The memfd of the shared ring on UCX shared memory, until its writer has claimed it (closed at the next ring's
     * creation: measured 0 per connection once set up), and UCX's tcp socket on {@code UCX_TLS=tcp} (1 from a client
     * process of its own); 2 stated, for a connection that has both (a peer on another host never claims the ring).
     */
    @Override
    public int descriptorsPerChannel() {
        return 2;
    }

    @Override
    public Optional<String> unavailabilityCause() {
        return Ucx.unavailabilityCause();
    }
}
