package io.rdmacomm.rdma.ucx;

import io.rdmacomm.api.CommunicatorException;
import io.rdmacomm.rdma.spi.ChannelHandler;
import io.rdmacomm.rdma.spi.ListenerHandler;
import io.rdmacomm.rdma.spi.RdmaChannel;
import io.rdmacomm.rdma.spi.UcxTransports;
import io.rdmacomm.rdma.spi.RdmaListener;
import io.rdmacomm.rdma.spi.RdmaProvider;
import java.io.IOException;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import org.openucx.jucx.UcxCallback;
import org.openucx.jucx.UcxUtils;
import org.openucx.jucx.ucp.UcpConnectionRequest;
import org.openucx.jucx.ucp.UcpEndpointParams;
import org.openucx.jucx.ucp.UcpListener;
import org.openucx.jucx.ucp.UcpListenerParams;
import org.openucx.jucx.ucp.UcpRequest;
import org.openucx.jucx.ucs.UcsConstants;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@code ucx-jucx} RDMA provider, which {@code provider=ucx} selects where {@code ucx-ffm} cannot run: JUCX
 * over the system's libucx, using whatever UCX finds (InfiniBand/RoCE verbs,
 * shared memory, tcp; restrict it with {@code UCX_TLS}). Connections are UCX client/server endpoints created from
 * socket addresses; a vanished peer fails the connection through the endpoint's error handler.
 */
public final class UcxProvider implements RdmaProvider {
    private static final Logger LOG = LoggerFactory.getLogger(UcxProvider.class);

    @Override
    public String name() {
        return "ucx-jucx";
    }

    @Override
    public Optional<String> unavailabilityCause() {
        return UcxRuntime.unavailabilityCause();
    }

    @Override
    public RdmaChannel connect(InetSocketAddress peer, Duration timeout, ChannelHandler handler) throws IOException {
        WorkerLoop loop;
        try {
            loop = new WorkerLoop("client");
        } catch (RuntimeException e) {
            throw new CommunicatorException("UCX could not create a worker: " + e.getMessage(), e);
        }
        String name = peer.getAddress().getHostAddress() + ":" + peer.getPort();
        UcxChannel ch = new UcxChannel(loop, 0, name, UcxTransports.putIsEmulated());
        ch.handler = handler;
        loop.add(0, ch);
        loop.begin();
        try {
            ch.ep = loop.worker.newEndpoint(endpointParams().setSocketAddress(peer)
                    .setErrorHandler(ch::onEpError).setName("rdmacomm"));
            IOException f = ch.awaitConnected(System.nanoTime() + timeout.toNanos());
            if (f != null) {
                int status = f instanceof CommunicatorException c ? c.nativeStatus().orElse(0) : 0;
                if (status == UcsConstants.STATUS.UCS_ERR_UNREACHABLE || status == UcsConstants.STATUS.UCS_ERR_REJECTED
                        || status == UcsConstants.STATUS.UCS_ERR_CONNECTION_RESET
                        || status == UcsConstants.STATUS.UCS_ERR_NOT_CONNECTED) {
                    ConnectException ce = new ConnectException("connection refused by " + name + " ("
                            + f.getMessage() + ")");
                    ce.initCause(f);
                    throw ce;
                }
                throw f;
            }
            return ch;
        } catch (IOException | RuntimeException e) {
            ch.close();
            if (e instanceof RuntimeException) {
                ConnectException ce = new ConnectException("UCX could not connect to " + name + ": " + e.getMessage());
                ce.initCause(e);
                throw ce;
            }
            throw e;
        } finally {
            loop.end();
        }
    }

    @Override
    public RdmaListener listen(InetSocketAddress address, ListenerHandler handler) throws IOException {
        WorkerLoop loop;
        try {
            loop = new WorkerLoop("server");
        } catch (RuntimeException e) {
            throw new CommunicatorException("UCX could not create a worker: " + e.getMessage(), e);
        }
        AtomicInteger ids = new AtomicInteger(1);
        UcpListener listener;
        try {
            listener = loop.worker.newListener(new UcpListenerParams().setSockAddr(address)
                    .setConnectionHandler(request -> accept(loop, ids.getAndIncrement(), request, handler)));
        } catch (RuntimeException e) {
            loop.release();
            throw new CommunicatorException("UCX could not listen on " + address + ": " + e.getMessage(), e);
        }
        InetSocketAddress bound = listener.getAddress();
        return new RdmaListener() {
            private boolean closed;

            @Override
            public InetSocketAddress address() {
                return new InetSocketAddress(address.getAddress(), bound.getPort());
            }

            @Override
            public synchronized void close() {
                if (!closed) {
                    closed = true;
                    listener.close();
                    loop.release();
                }
            }
        };
    }

    /**
     * Endpoints in UCX's default error mode, not peer mode: libucx 1.13 gives a peer-mode endpoint only transports
     * that report peer failure, which leaves out shared memory (sysv/posix active messages, cma put), so a
     * same-host connection ran over tcp/lo with put emulated in active messages (a flush then waits for the
     * target's progress). A killed peer is still reported through the endpoint's error handler: its
     * connection-manager socket closes ({@code UcxPeerDeathTest}, both transports).
     */
    private static UcpEndpointParams endpointParams() {
        return new UcpEndpointParams();
    }

    /** A connection request, on the server's progress thread. */
    private static void accept(WorkerLoop loop, int id, UcpConnectionRequest request, ListenerHandler handler) {
        InetSocketAddress client = request.getClientAddress();
        String name = client == null ? "peer#" + id : client.getAddress().getHostAddress() + ":" + client.getPort();
        UcxChannel ch = new UcxChannel(loop, id, name, UcxTransports.putIsEmulated());
        loop.retain();
        loop.add(id, ch);
        try {
            ch.ep = loop.worker.newEndpoint(endpointParams().setConnectionRequest(request)
                    .setErrorHandler(ch::onEpError).setName("rdmacomm"));
            ch.remoteId = 0;
            ch.handler = handler.onConnection(ch);
            ByteBuffer h = ByteBuffer.allocateDirect(8).order(ByteOrder.BIG_ENDIAN).putInt(0).putInt(id).flip();
            ch.ep.sendAmNonBlocking(WorkerLoop.AM_ID, UcxUtils.getAddress(h), 8, 0, 0, 0, new UcxCallback() {
                @Override
                public void onSuccess(UcpRequest r) {
                    h.clear();
                }
            }, UcxRuntime.HOST_MEMORY);
        } catch (RuntimeException e) {
            LOG.warn("could not accept the UCX connection from {}: {}", name, e.getMessage());
            ch.close();
        }
    }
}
