package io.rdmacomm.rdma.ucx.ffm;

import io.rdmacomm.api.CommunicatorException;
import io.rdmacomm.rdma.spi.ListenerHandler;
import io.rdmacomm.rdma.spi.RdmaListener;
import io.rdmacomm.ucx.ffm.UcpConnectionRequest;
import io.rdmacomm.ucx.ffm.UcpListener;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A UCX listener on the node's worker. A connection request gets a channel and an endpoint at once (inside the
 * worker's progress), which sends the channel's id to the client; the engine sees the channel only once the client
 * answered with its own id (see {@link FfmNode}). Channels whose client never answered are closed with the
 * listener.
 */
final class FfmListener implements RdmaListener {
    private static final Logger LOG = LoggerFactory.getLogger(FfmListener.class);

    private final FfmNode node;
    private final ListenerHandler handler;
    private final UcpListener listener;
    private final InetSocketAddress bound;
    private final Set<Accepted> waiting = ConcurrentHashMap.newKeySet();
    private final AtomicBoolean closed = new AtomicBoolean();

    FfmListener(FfmNode node, InetSocketAddress address, ListenerHandler handler) throws IOException {
        this.node = node;
        this.handler = handler;
        try {
            listener = node.worker().listen(address, this::onRequest);
        } catch (RuntimeException e) {
            throw new CommunicatorException("UCX could not listen on " + address + ": " + e.getMessage(), e);
        }
        bound = new InetSocketAddress(address.getAddress(), listener.address().getPort());
    }

    @Override
    public InetSocketAddress address() {
        return bound;
    }

    /** Inside the worker's progress. */
    private void onRequest(UcpConnectionRequest request) {
        if (closed.get()) {
            request.reject();
            return;
        }
        InetSocketAddress client = request.clientAddress();
        String name = client.getAddress().getHostAddress() + ":" + client.getPort();
        FfmChannel ch;
        try {
            node.retain();
            ch = node.newChannel(name, null);
        } catch (IOException | RuntimeException e) {
            node.release();
            LOG.warn("could not accept the UCX connection from {}: {}", name, e.getMessage());
            request.reject();
            return;
        }
        try {
            ch.ep = request.accept(FfmNode.ERROR_MODE, ch.errorHandler());
        } catch (RuntimeException e) {
            LOG.warn("could not accept the UCX connection from {}: {}", name, e.getMessage());
            node.remove(ch);
            return;
        }
        Accepted a = new Accepted(ch);
        waiting.add(a);
        ch.accepted = a;
        ch.sendId(0);
    }

    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        listener.close();
        for (Accepted a : waiting) {
            if (waiting.remove(a)) {
                a.channel.close();
            }
        }
        node.release();
    }

    /** An accepted channel whose client has not said its channel id yet. */
    final class Accepted {
        final FfmChannel channel;

        Accepted(FfmChannel channel) {
            this.channel = channel;
        }

        /** Inside the worker's progress: the client's id arrived; the channel goes to the engine. */
        void handOver() {
            if (!waiting.remove(this)) {
                return;
            }
            try {
                channel.handler = handler.onConnection(channel);
            } catch (RuntimeException e) {
                LOG.warn("the engine refused the UCX connection from {}: {}", channel.peerName(), e.toString());
                channel.failConnection(new CommunicatorException("refused: " + e.getMessage(), e));
            }
        }
    }
}
