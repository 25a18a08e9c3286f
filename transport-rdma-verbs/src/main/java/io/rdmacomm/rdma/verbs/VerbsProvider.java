package io.rdmacomm.rdma.verbs;

import io.rdmacomm.api.TransportUnavailableException;
import io.rdmacomm.rdma.spi.ChannelHandler;
import io.rdmacomm.rdma.spi.RdmaChannel;
import io.rdmacomm.rdma.spi.RdmaNode;
import io.rdmacomm.rdma.spi.RdmaProvider;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.HashMap;
import java.util.Map;
import java.time.Duration;
import java.util.Optional;

/**
 * The {@code verbs} provider: the RDMA engine on libibverbs and librdmacm through DiSNI 2.1. Tested up to the DiSNI
 * boundary only; see {@code VERBS.md} in this module for what it needs and what has not been verified on hardware.
 */
public final class VerbsProvider implements RdmaProvider {
    private final VerbsProbe probe;
    private final Verbs.Cm cm;
    private final Settings settings;
    /** The process's nodes by side and interface. */
    private static final Map<String, VerbsNode> NODES = new HashMap<>();

    /** The provider {@link java.util.ServiceLoader} creates. */
    public VerbsProvider() {
        this(VerbsProbe.system(), DisniVerbs.CM, Settings.DEFAULT);
    }

    VerbsProvider(VerbsProbe probe, Verbs.Cm cm, Settings settings) {
        this.probe = probe;
        this.cm = cm;
        this.settings = settings;
    }

    @Override
    public String name() {
        return "verbs";
    }

    @Override
    public Optional<String> unavailabilityCause() {
        return probe.unavailabilityCause();
    }

    private void requireAvailable() throws TransportUnavailableException {
        Optional<String> cause = probe.unavailabilityCause();
        if (cause.isPresent()) {
            throw new TransportUnavailableException("the verbs provider cannot run here: " + cause.get());
        }
    }

    @Override
    public RdmaNode node(InetAddress localInterface, RdmaChannel.Role side) throws IOException {
        requireAvailable();
        String key = side + " " + localInterface.getHostAddress();
        synchronized (NODES) {
            VerbsNode n = NODES.get(key);
            if (n != null && n.retain()) {
                return n;
            }
            VerbsNode[] created = new VerbsNode[1];
            created[0] = new VerbsNode(this, localInterface, side, () -> {
                synchronized (NODES) {
                    NODES.remove(key, created[0]);
                }
            });
            NODES.put(key, created[0]);
            return created[0];
        }
    }

    /** The largest message of this provider's channels. */
    int maxMessageSize() {
        return settings.slotSize() - VerbsCalls.HEADER_BYTES;
    }

    /** An rdma-cm connection to a listener of this provider. */
    VerbsChannel connect(InetSocketAddress peer, Duration timeout, ChannelHandler handler) throws IOException {
        requireAvailable();
        return new VerbsConnector(cm, settings).connect(peer, timeout, handler);
    }

    /** An rdma-cm listener; {@code port 0} picks a free port. */
    VerbsListener listen(InetSocketAddress address, VerbsListener.Handler handler) throws IOException {
        requireAvailable();
        return VerbsListener.open(cm, settings, address, handler);
    }
}
