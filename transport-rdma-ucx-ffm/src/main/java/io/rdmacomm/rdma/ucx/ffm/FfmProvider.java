package io.rdmacomm.rdma.ucx.ffm;

import io.rdmacomm.api.CommunicatorException;
import io.rdmacomm.rdma.spi.RdmaChannel;
import io.rdmacomm.rdma.spi.RdmaNode;
import io.rdmacomm.rdma.spi.RdmaProvider;
import io.rdmacomm.rdma.ucx.NodeRegistry;
import io.rdmacomm.rdma.ucx.UcxTransports;
import io.rdmacomm.rdma.ucx.UcxWire;
import io.rdmacomm.ucx.ffm.Ucx;
import java.io.IOException;
import java.net.InetAddress;
import java.util.Optional;

/**
 * The {@code ucx-ffm} RDMA provider, which {@code provider=ucx} selects wherever it can run: UCX through the
 * {@code ucx-ffm} binding, allocation-free on the data path and without JUCX's leaked requests. One {@link FfmNode}
 * per side (client, server) and interface in the process, shared by all connections of that side; endpoints are made
 * from the worker addresses the engine's bootstrap carries. UCX's own listener and connection manager are not used.
 */
public final class FfmProvider implements RdmaProvider {
    /** The process's nodes by side and UCX_NET_DEVICES value ("" for UCX's choice), as ucx-jucx keeps them. */
    private static final NodeRegistry<FfmNode> NODES = new NodeRegistry<>();

    @Override
    public String name() {
        return "ucx-ffm";
    }

    /**
     * Measured 1 per connection on UCX shared memory (the memfd of the shared ring) and 1 on {@code UCX_TLS=tcp}
     * (UCX's tcp socket); 2 stated, for a connection that has both.
     */
    @Override
    public int descriptorsPerChannel() {
        return 2;
    }

    @Override
    public String wireFamily() {
        return UcxWire.FAMILY;
    }

    /** UCX cannot connect a context with RMA (oneSided=trusted) to one without. */
    @Override
    public boolean oneSidedModesMustMatch() {
        return true;
    }

    @Override
    public Optional<String> unavailabilityCause() {
        return Ucx.unavailabilityCause();
    }

    @Override
    public RdmaNode node(InetAddress localInterface, RdmaChannel.Role side) throws IOException {
        return node(localInterface, side, false);
    }

    /**
     * With {@code trustPeers} (oneSided=trusted) a node of its own, whose context has RMA on every transport: its
     * channels write with put, flush and a notification, and hand out remote keys, as on an RDMA device.
     */
    @Override
    public RdmaNode node(InetAddress localInterface, RdmaChannel.Role side, boolean trustPeers) throws IOException {
        String devices = UcxTransports.netDevices(localInterface);
        String key = side + " " + (devices == null ? "" : devices) + (trustPeers ? " trusted" : "");
        return NODES.acquire(key, () -> {
            try {
                return new FfmNode(devices, side, trustPeers, () -> NODES.release(key));
            } catch (RuntimeException e) {
                throw new CommunicatorException("UCX (ucx-ffm) could not start"
                        + (devices == null ? "" : " on " + devices) + ": " + e.getMessage(), e);
            }
        });
    }
}
