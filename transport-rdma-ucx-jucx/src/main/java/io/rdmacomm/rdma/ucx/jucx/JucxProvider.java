package io.rdmacomm.rdma.ucx.jucx;

import io.rdmacomm.api.CommunicatorException;
import io.rdmacomm.rdma.spi.RdmaChannel;
import io.rdmacomm.rdma.spi.RdmaNode;
import io.rdmacomm.rdma.spi.RdmaProvider;
import io.rdmacomm.rdma.ucx.NodeRegistry;
import io.rdmacomm.rdma.ucx.UcxTransports;
import io.rdmacomm.rdma.ucx.UcxWire;
import java.io.IOException;
import java.net.InetAddress;
import java.util.Optional;

/**
 * The {@code ucx-jucx} RDMA provider, which {@code provider=ucx} selects where {@code ucx-ffm} cannot run: JUCX over the system's libucx, using whatever UCX finds (InfiniBand/RoCE verbs,
 * shared memory, tcp; restrict it with {@code UCX_TLS}). One node (context, worker, progress thread) per interface,
 * side (client, server) and process, shared by all connections of that side; endpoints are created from the peer's worker address, which the
 * engine's bootstrap carries. UCX's own connection manager and listener are not used.
 */
public final class JucxProvider implements RdmaProvider {
    /**
     * The process's nodes by side and UCX_NET_DEVICES value ("" for UCX's choice). One per side, not one for both:
     * with a client and a server in one process on one worker, UCX_TLS=tcp crashed in ucp_am_send_nbx (SIGSEGV,
     * contract kit's 64 peers), and the self transport's messages did not wake the sleeping worker.
     */
    private static final NodeRegistry<JucxNode> NODES = new NodeRegistry<>();

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
        return JucxRuntime.unavailabilityCause();
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
                return new JucxNode(devices, side, trustPeers, () -> NODES.release(key));
            } catch (RuntimeException e) {
                throw new CommunicatorException("UCX could not create a worker"
                        + (devices == null ? "" : " on " + devices) + ": " + e.getMessage(), e);
            }
        });
    }
}
