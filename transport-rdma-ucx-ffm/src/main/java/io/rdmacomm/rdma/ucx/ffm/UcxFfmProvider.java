package io.rdmacomm.rdma.ucx.ffm;

import io.rdmacomm.rdma.spi.ChannelHandler;
import io.rdmacomm.rdma.spi.ListenerHandler;
import io.rdmacomm.rdma.spi.RdmaChannel;
import io.rdmacomm.rdma.spi.RdmaListener;
import io.rdmacomm.rdma.spi.RdmaProvider;
import io.rdmacomm.ucx.ffm.Ucx;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Optional;

/**
 * The {@code ucx-ffm} RDMA provider, which {@code provider=ucx} selects wherever it can run: UCX through the
 * {@code ucx-ffm} binding, allocation-free on the data path and without JUCX's leaked requests. Channels of the
 * whole process share one {@link FfmNode}.
 */
public final class UcxFfmProvider implements RdmaProvider {

    @Override
    public String name() {
        return "ucx-ffm";
    }

    @Override
    public Optional<String> unavailabilityCause() {
        return Ucx.unavailabilityCause();
    }

    @Override
    public RdmaChannel connect(InetSocketAddress peer, Duration timeout, ChannelHandler handler) throws IOException {
        FfmNode node = FfmNode.acquire();
        return node.connect(peer, System.nanoTime() + timeout.toNanos(), handler);
    }

    @Override
    public RdmaListener listen(InetSocketAddress address, ListenerHandler handler) throws IOException {
        FfmNode node = FfmNode.acquire();
        try {
            return new FfmListener(node, address, handler);
        } catch (IOException | RuntimeException e) {
            node.release();
            throw e;
        }
    }
}
