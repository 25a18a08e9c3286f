package io.rdmacomm.rdma.verbs;

import com.ibm.disni.verbs.RdmaCmEvent.EventType;
import com.ibm.disni.verbs.RdmaCmId;
import com.ibm.disni.verbs.RdmaConnParam;
import io.rdmacomm.api.CommunicatorException;
import io.rdmacomm.rdma.spi.ChannelHandler;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.Iterator;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The server side of rdma-cm, driven entirely by the {@link CmLoop} thread: a connect request gets its queue pair
 * and pre-posted receives, then an accept; the channel goes to the handler once rdma-cm reports it established. A
 * request that does not get there in time ({@link #ESTABLISH_TIMEOUT_NANOS}; the SPI passes no handshake timeout to
 * {@code listen}) or fails (peer gone, rejected) is destroyed, and
 * the listener goes on serving others.
 */
final class VerbsListener implements AutoCloseable {
    /** Receives the established connections of a listener, on its rdma-cm thread; must not block. */
    @FunctionalInterface
    interface Handler {
        /** Returns the handler of the new channel's events. */
        ChannelHandler onConnection(VerbsChannel channel);
    }

    private static final Logger LOG = LoggerFactory.getLogger(VerbsListener.class);
    static final long ESTABLISH_TIMEOUT_NANOS = TimeUnit.SECONDS.toNanos(10);
    private static final int BACKLOG = 128;

    private final Verbs.Cm cm;
    private final Settings settings;
    private final Handler handler;
    private final long establishTimeoutNanos;
    private final Map<RdmaCmId, Half> halfOpen = new ConcurrentHashMap<>();
    private CmLoop loop;
    private RdmaCmId listenId;
    private InetSocketAddress address;
    private boolean closed;

    private record Half(VerbsChannel channel, long deadline) {
    }

    private VerbsListener(Verbs.Cm cm, Settings settings, Handler handler, long establishTimeoutNanos) {
        this.cm = cm;
        this.settings = settings;
        this.handler = handler;
        this.establishTimeoutNanos = establishTimeoutNanos;
    }

    static VerbsListener open(Verbs.Cm cm, Settings settings, InetSocketAddress address, Handler handler)
            throws IOException {
        return open(cm, settings, address, handler, ESTABLISH_TIMEOUT_NANOS);
    }

    static VerbsListener open(Verbs.Cm cm, Settings settings, InetSocketAddress address, Handler handler,
            long establishTimeoutNanos) throws IOException {
        if (address.isUnresolved() || !(address.getAddress() instanceof java.net.Inet4Address)) {
            throw new IOException("cannot listen on " + address + " with the verbs provider: DiSNI 2.1's rdma-cm"
                    + " binding takes resolved IPv4 addresses only");
        }
        VerbsListener l = new VerbsListener(cm, settings, handler, establishTimeoutNanos);
        l.loop = CmLoop.start(cm, l::expireHalfOpen);
        try {
            l.listenId = l.loop.createId();
            l.loop.listen(l.listenId, l::onListenEvent);
            l.listenId.bindAddr(address);
            l.listenId.listen(BACKLOG);
            SocketAddress bound = l.listenId.getSource();
            l.address = bound instanceof InetSocketAddress isa ? isa : address;
            return l;
        } catch (IOException | RuntimeException e) {
            l.close();
            throw new IOException("cannot listen on " + address + " with the verbs provider: " + e.getMessage(), e);
        }
    }

    /** The bound address (with the port actually chosen). */
    InetSocketAddress address() {
        return address;
    }

    private void onListenEvent(EventType type, RdmaCmId connId) {
        if (type != EventType.RDMA_CM_EVENT_CONNECT_REQUEST || connId == null) {
            LOG.debug("listener {}: rdma-cm event {}", address, type);
            return;
        }
        String peer = peerOf(connId);
        Verbs verbs = null;
        try {
            verbs = cm.createQueuePair(connId, settings);
            loop.retain();
            VerbsChannel channel;
            try {
                channel = new VerbsChannel(verbs, peer, settings, null, () -> {
                    loop.forget(connId);
                    loop.release();
                });
            } catch (IOException | RuntimeException e) {
                loop.release();
                throw e;
            }
            halfOpen.put(connId, new Half(channel, System.nanoTime() + establishTimeoutNanos));
            loop.listen(connId, (t, id) -> onConnectionEvent(connId, channel, t));
            RdmaConnParam param = new RdmaConnParam();
            param.setRetry_count(VerbsConnector.RETRIES);
            param.setRnr_retry_count(VerbsConnector.RETRIES);
            connId.accept(param);
        } catch (IOException | RuntimeException e) {
            LOG.warn("listener {}: dropping the connection request of {}: {}", address, peer, e.toString());
            Half h = halfOpen.remove(connId);
            loop.forget(connId);
            if (h != null) {
                h.channel.close();
            } else if (verbs != null) {
                verbs.destroy();
            } else {
                destroyQuietly(connId);
            }
        }
    }

    private void onConnectionEvent(RdmaCmId connId, VerbsChannel channel, EventType type) {
        Half h = halfOpen.remove(connId);
        if (type == EventType.RDMA_CM_EVENT_ESTABLISHED && h != null) {
            ChannelHandler ch;
            try {
                ch = handler.onConnection(channel);
            } catch (RuntimeException e) {
                LOG.warn("listener {}: the handler refused the connection of {}", address, channel.peerName(), e);
                loop.forget(connId);
                channel.close();
                return;
            }
            channel.handler(ch);
            channel.start();
        } else if (h != null) {
            LOG.info("listener {}: the connection of {} failed while being set up ({})", address,
                    channel.peerName(), type);
            loop.forget(connId);
            channel.close();
        } else if (type == EventType.RDMA_CM_EVENT_DISCONNECTED) {
            channel.fail(new CommunicatorException("peer " + channel.peerName() + " closed the RDMA connection"
                    + " (RDMA_CM_EVENT_DISCONNECTED)"));
        }
    }

    private void expireHalfOpen() {
        long now = System.nanoTime();
        for (Iterator<Map.Entry<RdmaCmId, Half>> it = halfOpen.entrySet().iterator(); it.hasNext();) {
            Map.Entry<RdmaCmId, Half> e = it.next();
            if (now - e.getValue().deadline() > 0) {
                it.remove();
                LOG.info("listener {}: {} did not complete the RDMA connection within {} ms; dropped", address,
                        e.getValue().channel().peerName(), TimeUnit.NANOSECONDS.toMillis(establishTimeoutNanos));
                loop.forget(e.getKey());
                e.getValue().channel().close();
            }
        }
    }

    private static String peerOf(RdmaCmId connId) {
        try {
            SocketAddress a = connId.getDestination();
            if (a instanceof InetSocketAddress isa) {
                return isa.getAddress().getHostAddress() + ":" + isa.getPort();
            }
            return a == null ? "unknown peer" : a.toString();
        } catch (IOException | RuntimeException e) {
            return "unknown peer";
        }
    }

    private static void destroyQuietly(RdmaCmId id) {
        try {
            id.destroyId();
        } catch (IOException | RuntimeException e) {
            LOG.debug("destroying a cm id: {}", e.toString());
        }
    }

    /** Stops accepting; half-open connections are dropped, established ones stay open. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (listenId != null) {
            loop.forget(listenId);
            destroyQuietly(listenId);
        }
        for (RdmaCmId id : halfOpen.keySet()) {
            Half h = halfOpen.remove(id);
            if (h != null) {
                loop.forget(id);
                h.channel().close();
            }
        }
        loop.release();
    }
}
