package io.rdmacomm.rdma.verbs;

import io.rdmacomm.api.TransportUnavailableException;
import io.rdmacomm.rdma.spi.ChannelHandler;
import io.rdmacomm.rdma.spi.ListenerHandler;
import io.rdmacomm.rdma.spi.RdmaChannel;
import io.rdmacomm.rdma.spi.RdmaListener;
import io.rdmacomm.rdma.spi.RdmaProvider;
import java.io.IOException;
import java.net.InetSocketAddress;
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
    public RdmaChannel connect(InetSocketAddress peer, Duration timeout, ChannelHandler handler) throws IOException {
        requireAvailable();
        return new VerbsConnector(cm, settings).connect(peer, timeout, handler);
    }

    @Override
    public RdmaListener listen(InetSocketAddress address, ListenerHandler handler) throws IOException {
        requireAvailable();
        return VerbsListener.open(cm, settings, address, handler);
    }
}
