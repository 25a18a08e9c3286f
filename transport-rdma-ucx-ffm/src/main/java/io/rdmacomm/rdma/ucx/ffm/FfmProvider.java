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
     * None of its own once set up: a shared ring's memfd is closed once its writer claimed it, and the rings not
     * claimed yet are a bounded pool ({@link #descriptorsShared()}); UCX's sockets are per peer process.
     */
    @Override
    public int descriptorsPerChannel() {
        return 0;
    }

    /**
     * UCX's sockets to one peer process's worker on its tcp transport, one each way, shared by all channels to that
     * process ({@code SharedEndpoints}); none on shared memory.
     */
    @Override
    public int descriptorsPerPeer() {
        return 2;
    }

    /** The memfds of shared rings not claimed by their writers yet: at most {@link SharedRing#MAX_UNCLAIMED}. */
    @Override
    public int descriptorsShared() {
        return SharedRing.MAX_UNCLAIMED;
    }

    @Override
    public Optional<String> unavailabilityCause() {
        return Ucx.unavailabilityCause();
    }
}
