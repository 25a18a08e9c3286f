package io.rdmacomm.rdma.verbs;

import com.ibm.disni.verbs.RdmaCmEvent.EventType;
import com.ibm.disni.verbs.RdmaCmId;
import com.ibm.disni.verbs.RdmaConnParam;
import io.rdmacomm.api.CommunicatorException;
import io.rdmacomm.rdma.spi.ChannelHandler;
import java.io.IOException;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * The client side of rdma-cm: resolve address, resolve route, create the queue pair and pre-post its receives,
 * connect, each step waiting for its event against one deadline. DiSNI's own {@code RdmaEndpoint.connect} waits
 * without a bound and ignores the error events (address or route error, rejected, unreachable), so a refused or
 * silent peer would hang it; here an error event fails at once and the deadline fails the rest, and either way
 * everything made so far is destroyed.
 */
final class VerbsConnector {
    /** Retries of the RC transport and of RNR NAKs; 7 means "retry forever" for RNR. */
    static final byte RETRIES = 7;

    private final Verbs.Cm cm;
    private final Settings settings;

    VerbsConnector(Verbs.Cm cm, Settings settings) {
        this.cm = cm;
        this.settings = settings;
    }

    VerbsChannel connect(InetSocketAddress peer, Duration timeout, ChannelHandler handler) throws IOException {
        if (peer.isUnresolved() || !(peer.getAddress() instanceof java.net.Inet4Address)) {
            throw new ConnectException("cannot connect to " + peer + " with the verbs provider: DiSNI 2.1's rdma-cm"
                    + " binding takes resolved IPv4 addresses only");
        }
        String peerName = peer.getAddress().getHostAddress() + ":" + peer.getPort();
        long deadline = System.nanoTime() + timeout.toNanos();
        BlockingQueue<EventType> events = new ArrayBlockingQueue<>(16);
        CmLoop loop = CmLoop.start(cm, () -> { });
        RdmaCmId id = null;
        Verbs verbs = null;
        VerbsChannel channel = null;
        try {
            id = loop.createId();
            loop.listen(id, (type, connId) -> events.offer(type));
            id.resolveAddr(null, peer, millisLeft(deadline));
            await(events, EventType.RDMA_CM_EVENT_ADDR_RESOLVED, deadline, peerName, timeout);
            id.resolveRoute(millisLeft(deadline));
            await(events, EventType.RDMA_CM_EVENT_ROUTE_RESOLVED, deadline, peerName, timeout);
            verbs = cm.createQueuePair(id, settings);
            RdmaCmId ownId = id;
            channel = new VerbsChannel(verbs, peerName, settings, handler, () -> {
                loop.forget(ownId);
                loop.release();
            });
            RdmaConnParam param = new RdmaConnParam();
            param.setRetry_count(RETRIES);
            param.setRnr_retry_count(RETRIES);
            id.connect(param);
            await(events, EventType.RDMA_CM_EVENT_ESTABLISHED, deadline, peerName, timeout);
            VerbsChannel established = channel;
            loop.listen(id, (type, connId) -> {
                if (type == EventType.RDMA_CM_EVENT_DISCONNECTED) {
                    established.fail(new CommunicatorException("peer " + peerName + " closed the RDMA connection"
                            + " (RDMA_CM_EVENT_DISCONNECTED)"));
                }
            });
            channel.start();
            return channel;
        } catch (IOException | RuntimeException e) {
            cleanUp(loop, id, verbs, channel, e);
            throw e;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            IOException io = new java.io.InterruptedIOException("interrupted while connecting to " + peerName);
            cleanUp(loop, id, verbs, channel, io);
            throw io;
        }
    }

    private static void cleanUp(CmLoop loop, RdmaCmId id, Verbs verbs, VerbsChannel channel, Exception primary) {
        try {
            if (id != null) {
                loop.forget(id);
            }
            if (channel != null) {
                // Destroys the queue pair and the cm id, then releases the loop.
                channel.close();
                return;
            }
            if (verbs != null) {
                verbs.destroy();
            } else if (id != null) {
                id.destroyId();
            }
        } catch (IOException | RuntimeException e) {
            primary.addSuppressed(e);
        }
        loop.release();
    }

    private static int millisLeft(long deadline) {
        return (int) Math.max(1, Math.min(Integer.MAX_VALUE,
                TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
    }

    /** Waits for {@code wanted}; an error event or the deadline fails with the exception the SPI names. */
    static void await(BlockingQueue<EventType> events, EventType wanted, long deadline, String peer,
            Duration timeout) throws IOException, InterruptedException {
        while (true) {
            long left = deadline - System.nanoTime();
            EventType got = left <= 0 ? null : events.poll(left, TimeUnit.NANOSECONDS);
            if (got == null) {
                throw new SocketTimeoutException("connecting to rdma peer " + peer + " (provider verbs) timed out"
                        + " after " + timeout.toMillis() + " ms waiting for " + wanted);
            }
            if (got == wanted) {
                return;
            }
            switch (got) {
                case RDMA_CM_EVENT_REJECTED -> throw new ConnectException("rdma peer " + peer
                        + " refused the connection (RDMA_CM_EVENT_REJECTED: nothing listens there, or it rejected)");
                case RDMA_CM_EVENT_ADDR_ERROR -> throw new ConnectException("cannot reach rdma peer " + peer
                        + ": address resolution failed (RDMA_CM_EVENT_ADDR_ERROR; is the address on an RDMA"
                        + " device's network?)");
                case RDMA_CM_EVENT_ROUTE_ERROR -> throw new ConnectException("cannot reach rdma peer " + peer
                        + ": route resolution failed (RDMA_CM_EVENT_ROUTE_ERROR)");
                case RDMA_CM_EVENT_UNREACHABLE, RDMA_CM_EVENT_CONNECT_ERROR -> throw new ConnectException(
                        "cannot reach rdma peer " + peer + " (" + got + ")");
                case RDMA_CM_EVENT_DISCONNECTED, RDMA_CM_EVENT_DEVICE_REMOVAL -> throw new ConnectException(
                        "the connection to rdma peer " + peer + " ended while it was set up (" + got + ")");
                default -> {
                    // Events that do not decide this step (address change, timewait exit).
                }
            }
        }
    }
}
