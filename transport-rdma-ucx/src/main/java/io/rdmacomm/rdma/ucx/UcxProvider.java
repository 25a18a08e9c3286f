package io.rdmacomm.rdma.ucx;

import io.rdmacomm.api.CommunicatorException;
import io.rdmacomm.rdma.spi.RdmaChannel;
import io.rdmacomm.rdma.spi.RdmaNode;
import io.rdmacomm.rdma.spi.RdmaProvider;
import java.io.IOException;
import java.net.InetAddress;
import java.util.Optional;
import java.util.function.BooleanSupplier;

/**
 * What the two UCX providers ({@code ucx-jucx}, {@code ucx-ffm}) do alike: they speak {@link UcxWire}, need both ends
 * to agree on {@code oneSided}, and keep one node per side (client, server), interface and trust in the process,
 * shared by all connections of that side. Endpoints are made from the worker addresses the engine's bootstrap
 * carries; UCX's own listener and connection manager are not used.
 *
 * @param <N> the provider's node type
 */
public abstract class UcxProvider<N extends RdmaNode> implements RdmaProvider {
    /** The name of the provider on the ucx-ffm binding (java.lang.foreign, JDK 22+). */
    public static final String FFM = "ucx-ffm";
    /** The name of the provider on JUCX (JNI, JDK 17+). */
    public static final String JUCX = "ucx-jucx";
    /** Makes a provider's node; {@code lastUserLeft} releases it from the registry (true: destroy it). */
    @FunctionalInterface
    protected interface NodeFactory<N> {
        /**
         * A new node on {@code netDevices} (UCX_NET_DEVICES, null for UCX's choice) for {@code side}, giving its peers
         * one-sided access on every transport if {@code trustPeers}.
         */
        N create(String netDevices, RdmaChannel.Role side, boolean trustPeers, BooleanSupplier lastUserLeft);
    }

    private final NodeRegistry<N> nodes;
    private final NodeFactory<N> factory;
    private final String failure;

    /**
     * @param nodes the process's nodes of this provider, by side, UCX_NET_DEVICES value ("" for UCX's choice) and
     *     trust: static in the provider, since {@code ServiceLoader} makes new provider instances
     * @param factory makes a node
     * @param failure what the error says when a node cannot be made ("UCX could not create a worker")
     */
    protected UcxProvider(NodeRegistry<N> nodes, NodeFactory<N> factory, String failure) {
        this.nodes = nodes;
        this.factory = factory;
        this.failure = failure;
    }

    @Override
    public final String wireFamily() {
        return UcxWire.FAMILY;
    }

    /** UCX cannot connect a context with RMA (oneSided=trusted) to one without. */
    @Override
    public final boolean oneSidedModesMustMatch() {
        return true;
    }

    /** That of {@code ucx-ffm}, which a JVM before 22 cannot load and a build by one leaves out. */
    @Override
    public final Optional<String> absenceCause(String name) {
        return name.equals(FFM) ? Optional.of(ffmRequirement(Runtime.version().feature())) : Optional.empty();
    }

    /** What {@code ucx-ffm} needs, said to a JVM of feature version {@code feature} that lacks it. */
    public static String ffmRequirement(int feature) {
        return "it needs JDK 22 or later (this JVM is " + feature + ") and the module transport-rdma-ucx-ffm";
    }

    @Override
    public final RdmaNode node(InetAddress localInterface, RdmaChannel.Role side) throws IOException {
        return node(localInterface, side, false);
    }

    /**
     * With {@code trustPeers} (oneSided=trusted) a node of its own, whose context has RMA on every transport: its
     * channels write with put, flush and a notification, and hand out remote keys, as on an RDMA device.
     */
    @Override
    public final RdmaNode node(InetAddress localInterface, RdmaChannel.Role side, boolean trustPeers)
            throws IOException {
        String devices = UcxTransports.netDevices(localInterface);
        String key = side + " " + (devices == null ? "" : devices) + (trustPeers ? " trusted" : "");
        return nodes.acquire(key, () -> {
            try {
                return factory.create(devices, side, trustPeers, () -> nodes.release(key));
            } catch (RuntimeException e) {
                throw new CommunicatorException(failure + (devices == null ? "" : " on " + devices) + ": "
                        + e.getMessage(), e);
            }
        });
    }
}
