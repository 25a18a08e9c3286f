package io.rdmacomm.rdma.verbs;

import io.rdmacomm.api.CommunicatorException;
import io.rdmacomm.rdma.spi.ChannelHandler;
import io.rdmacomm.rdma.spi.RdmaChannel;
import io.rdmacomm.rdma.spi.RdmaNode;
import java.io.IOException;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The verbs node of one side and interface: on the server side an rdma-cm listener on the interface (port chosen by
 * the system), whose address (IPv4 and port, 6 bytes) is the node address; on the client side the interface alone.
 * The ACTIVE side connects rdma-cm to the PASSIVE node's address and sends, as its first message on the queue pair,
 * the id of the PASSIVE channel it is for ({@link #CLAIM_LENGTH} bytes); the node binds the queue pair to that
 * channel. Queue pairs that claim no waiting channel are closed.
 */
final class VerbsNode implements RdmaNode {
    private static final Logger LOG = LoggerFactory.getLogger(VerbsNode.class);
    static final int ADDRESS_LENGTH = 6;
    static final int CLAIM_LENGTH = 4;

    private final VerbsProvider provider;
    private final InetAddress local;
    private final VerbsListener listener;
    private final AtomicInteger ids = new AtomicInteger(1);
    /** PASSIVE channels waiting for their queue pair, by id. */
    private final Map<Integer, VerbsNodeChannel> waiting = new ConcurrentHashMap<>();
    private final Map<Integer, VerbsNodeChannel> channels = new ConcurrentHashMap<>();
    private final Runnable onLast;
    private int users = 1;

    VerbsNode(VerbsProvider provider, InetAddress local, RdmaChannel.Role side, Runnable onLast) throws IOException {
        if (!(local instanceof Inet4Address)) {
            throw new IOException("the verbs provider needs an IPv4 interface (DiSNI 2.1's rdma-cm binding), not "
                    + local.getHostAddress());
        }
        this.provider = provider;
        this.local = local;
        this.onLast = onLast;
        this.listener = side == RdmaChannel.Role.PASSIVE
                ? provider.listen(new InetSocketAddress(local, 0), this::onQueuePair) : null;
    }

    synchronized boolean retain() {
        if (users == 0) {
            return false;
        }
        users++;
        return true;
    }

    @Override
    public byte[] address() {
        int port = listener == null ? 0 : listener.address().getPort();
        return ByteBuffer.allocate(ADDRESS_LENGTH).put(local.getAddress()).putShort((short) port).array();
    }

    /** The rdma-cm address a node address names. */
    static InetSocketAddress cmAddress(byte[] address) throws IOException {
        if (address.length != ADDRESS_LENGTH) {
            throw new IOException("a verbs node address has " + ADDRESS_LENGTH + " bytes, not " + address.length);
        }
        ByteBuffer b = ByteBuffer.wrap(address);
        byte[] ip = new byte[4];
        b.get(ip);
        int port = Short.toUnsignedInt(b.getShort());
        if (port == 0) {
            throw new IOException("the verbs node address names no rdma-cm port (a client node)");
        }
        return new InetSocketAddress(InetAddress.getByAddress(ip), port);
    }

    @Override
    public RdmaChannel newChannel(String peerName, ChannelHandler handler) {
        VerbsNodeChannel ch = new VerbsNodeChannel(this, ids.getAndIncrement(), peerName, handler);
        channels.put(ch.localId(), ch);
        return ch;
    }

    VerbsProvider provider() {
        return provider;
    }

    void await(VerbsNodeChannel ch) {
        waiting.put(ch.localId(), ch);
    }

    void forget(VerbsNodeChannel ch) {
        waiting.remove(ch.localId(), ch);
        channels.remove(ch.localId(), ch);
    }

    /** A queue pair the listener established: its first message says which waiting channel it is for. */
    private ChannelHandler onQueuePair(VerbsChannel qp) {
        return new ChannelHandler() {
            private volatile VerbsNodeChannel bound;

            @Override
            public void onMessage(ByteBuffer message) {
                VerbsNodeChannel b = bound;
                if (b != null) {
                    b.handler().onMessage(message);
                    return;
                }
                int id = message.remaining() == CLAIM_LENGTH ? message.getInt(message.position()) : -1;
                VerbsNodeChannel ch = id < 0 ? null : waiting.remove(id);
                if (ch == null) {
                    LOG.warn("verbs node {}: a queue pair from {} claimed no waiting channel ({} bytes); closed",
                            local.getHostAddress(), qp.peerName(), message.remaining());
                    qp.fail(new CommunicatorException("claimed no waiting channel"));
                    return;
                }
                bound = ch;
                ch.bind(qp);
            }

            @Override
            public void onError(IOException cause) {
                VerbsNodeChannel b = bound;
                if (b != null) {
                    b.handler().onError(cause);
                }
            }
        };
    }

    @Override
    public boolean poll() {
        return false;
    }

    @Override
    public void close() {
        synchronized (this) {
            if (users == 0 || --users > 0) {
                return;
            }
        }
        onLast.run();
        if (listener != null) {
            listener.close();
        }
    }
}
