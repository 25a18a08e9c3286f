package io.rdmacomm.netty;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelMetadata;
import io.netty.channel.ChannelOutboundBuffer;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.ChannelPromise;
import io.netty.channel.ConnectTimeoutException;
import io.netty.channel.EventLoop;
import io.netty.channel.IoEvent;
import io.netty.channel.IoEventLoop;
import io.netty.channel.IoRegistration;
import io.netty.channel.RecvByteBufAllocator;
import io.netty.channel.socket.ChannelInputShutdownEvent;
import io.netty.channel.socket.ChannelInputShutdownReadComplete;
import io.netty.channel.socket.ServerSocketChannel;
import io.netty.channel.socket.SocketChannel;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.Future;
import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.Communicators;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.nio.channels.AlreadyConnectedException;
import java.nio.channels.ConnectionPendingException;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;

/**
 * A Netty {@link SocketChannel} over a connected {@link Communicator}: tcp://, rdma:// or any transport whose
 * communicators tell readiness ({@link Communicator#notifyReadable}). Runs on an event loop of
 * {@link CommunicatorIoHandler} ({@code new MultiThreadIoEventLoopGroup(CommunicatorIoHandler.newFactory("rdma"))});
 * connects to a {@link CommunicatorAddress} or to an {@link InetSocketAddress} with the scheme of
 * {@link CommunicatorChannelOption#SCHEME} or of the loop.
 *
 * <p>Reads run on the event loop and never block: after the readiness listener fired, at most
 * {@link Communicator#available()} bytes are read into buffers of the channel's allocator. Writes do block in the
 * contract (back-pressure), so a flush hands the flushed buffers to a thread of its own, which writes their NIO views
 * and calls {@link Communicator#sync()}; their promises complete on the loop once the sync returned. The buffers stay
 * in the outbound buffer until then, so the write buffer water marks and writability work as on NIO.
 *
 * <p>The contract has no half-close: {@link #shutdownOutput()} and {@link #shutdownInput()} fail with an
 * {@link UnsupportedOperationException}; with {@code ALLOW_HALF_CLOSURE} the end of the peer's stream fires a
 * {@link ChannelInputShutdownEvent} instead of closing the channel.
 */
public class CommunicatorSocketChannel extends WholeStreamChannel implements SocketChannel {

    private static final ChannelMetadata METADATA = new ChannelMetadata(false, 16);
    /** How long a close waits for a write round in progress before it closes the communicator under it. */
    private static final long CLOSE_GRACE_NANOS = TimeUnit.SECONDS.toNanos(1);


    private final CommunicatorSocketChannelConfig config;

    private volatile Communicator communicator;
    /** The communicator being connected, closed if the channel closes meanwhile. */
    private volatile Communicator connecting;
    private volatile boolean open = true;
    private volatile boolean active;
    private volatile boolean inputShutdown;
    private volatile SocketAddress local;
    private volatile SocketAddress remote;

    private IoRegistration registration;
    private boolean readPending;
    private boolean armed;

    private ChannelPromise connectPromise;
    private Future<?> connectTimeout;

    private final WriteRound writes = new WriteRound(this);

    /** An unconnected channel, for {@code Bootstrap.channel(CommunicatorSocketChannel.class)}. */
    public CommunicatorSocketChannel() {
        this(null, null);
    }

    /** A channel for a communicator a server accepted. */
    @SuppressWarnings("this-escape") // the config refers to its channel, as Netty's own channels' do
    CommunicatorSocketChannel(Channel parent, Communicator accepted) {
        super(parent);
        config = new CommunicatorSocketChannelConfig(this);
        if (accepted != null) {
            communicator = accepted;
            active = true;
            local = Endpoints.address(accepted.endpoint());
            remote = Endpoints.peer(accepted.peerName());
        }
    }

    /** The connected communicator, or null before the connection exists. */
    public Communicator communicator() {
        return communicator;
    }

    @Override
    public CommunicatorSocketChannelConfig config() {
        return config;
    }

    @Override
    public ChannelMetadata metadata() {
        return METADATA;
    }

    @Override
    public ServerSocketChannel parent() {
        return (ServerSocketChannel) super.parent();
    }

    @Override
    public boolean isOpen() {
        return open;
    }

    @Override
    public boolean isActive() {
        return open && active;
    }

    /** The local address where it is an IP address and port (tcp://, rdma://), else null: see {@link #endpointAddress()}. */
    @Override
    public InetSocketAddress localAddress() {
        SocketAddress a = super.localAddress();
        return a instanceof InetSocketAddress ? (InetSocketAddress) a : null;
    }

    @Override
    public InetSocketAddress remoteAddress() {
        SocketAddress a = super.remoteAddress();
        return a instanceof InetSocketAddress ? (InetSocketAddress) a : null;
    }

    /** The local endpoint as a URI (for a connected client: the endpoint it connected to). */
    public CommunicatorAddress endpointAddress() {
        Communicator c = communicator;
        return c == null ? null : new CommunicatorAddress(c.endpoint().toString());
    }

    @Override
    protected SocketAddress localAddress0() {
        return local;
    }

    @Override
    protected SocketAddress remoteAddress0() {
        return remote;
    }

    @Override
    protected boolean isCompatible(EventLoop loop) {
        return loop instanceof IoEventLoop && ((IoEventLoop) loop).isCompatible(CommunicatorUnsafe.class);
    }

    @Override
    protected AbstractUnsafe newUnsafe() {
        return new CommunicatorUnsafe();
    }

    @Override
    protected void doRegister(ChannelPromise promise) {
        CommunicatorIoHandler.register(this, (CommunicatorUnsafe) unsafe(), promise, r -> registration = r);
    }

    @Override
    protected void doDeregister() {
        IoRegistration r = registration;
        if (r != null) {
            registration = null;
            armed = false;
            r.cancel();
        }
    }

    /** A client cannot choose its local address in the contract: a bind to port 0 is accepted and changes nothing. */
    @Override
    protected void doBind(SocketAddress localAddress) {
        if (!anyPort(localAddress)) {
            throw new UnsupportedOperationException("a communicator client cannot bind a local address: "
                    + localAddress + " (only port 0, which is ignored)");
        }
        local = localAddress;
    }

    private static boolean anyPort(SocketAddress a) {
        return a instanceof InetSocketAddress && ((InetSocketAddress) a).getPort() == 0;
    }

    @Override
    protected void doDisconnect() throws Exception {
        doClose();
    }

    @Override
    protected void doClose() throws Exception {
        open = false;
        active = false;
        Communicator c = communicator;
        Communicator pending = connecting;
        try {
            if (c != null) {
                // a communicator closed while a write round's thread still writes ends the stream without telling
                // the peer (rdma:// sends no CLOSE then, and the peer reads "connection lost" instead of its end):
                // let a round that is moving finish first; one stuck on back-pressure is cut short by the close
                writes.awaitWriter(CLOSE_GRACE_NANOS);
                c.close(); // unblocks a write round's write or sync
            }
        } finally {
            if (pending != null) {
                pending.close();
            }
            writes.awaitWriter();
        }
    }

    @Override
    protected void doBeginRead() {
        if (inputShutdown) {
            return;
        }
        readPending = true;
        arm();
    }

    private void arm() {
        IoRegistration r = registration;
        if (armed || r == null || !r.isValid() || communicator == null) {
            return;
        }
        armed = true;
        if (r.submit(CommunicatorIoOps.READ) < 0 && r.isValid()) {
            armed = false;
            pipeline().fireExceptionCaught(new UnsupportedOperationException(communicator.endpoint().scheme()
                    + ":// connection to " + communicator.peerName() + " cannot tell readiness (notifyReadable),"
                    + " which an event loop needs (tcp:// with wire=raw cannot)"));
            unsafe().close(voidPromise());
        }
    }

    @Override
    protected Object filterOutboundMessage(Object msg) {
        if (msg instanceof ByteBuf) {
            ByteBuf buf = (ByteBuf) msg;
            if (buf.isDirect()) {
                return buf;
            }
            // the communicators take any ByteBuffer, but a direct one is what they copy from without a staging copy
            int n = buf.readableBytes();
            ByteBufAllocator alloc = alloc();
            ByteBuf direct = alloc.isDirectBufferPooled() ? alloc.directBuffer(n) : ByteBufAllocator.DEFAULT.directBuffer(n);
            direct.writeBytes(buf, buf.readerIndex(), n);
            ReferenceCountUtil.safeRelease(buf);
            return direct;
        }
        throw new UnsupportedOperationException("unsupported message type: " + msg.getClass().getName()
                + " (a communicator channel writes ByteBufs; FileRegion is not supported)");
    }

    // ---- writes: WriteRound -----------------------------------------------------------------------------------

    @Override
    protected void doWrite(ChannelOutboundBuffer in) {
        writes.start(in);
    }

    /** A write round failed: as a failed socket write. On the loop. */
    void writeFailed(Throwable t) {
        ((CommunicatorUnsafe) unsafe()).writeFailed(t);
    }

    /** A write round ended with more flushed: the next round. On the loop. */
    void flushMore() {
        ((CommunicatorUnsafe) unsafe()).flushMore();
    }

    @Override
    boolean peerStreamEnded() {
        return inputShutdown;
    }

    // ---- the unsafe: connect, readiness, reads ---------------------------------------------------------------

    final class CommunicatorUnsafe extends AbstractUnsafe implements CommunicatorIoHandle {
        private final java.util.function.BooleanSupplier isActive = CommunicatorSocketChannel.this::isActive;
        private final Runnable readServed = () -> readPending = false;

        @Override
        public Communicator communicator() {
            return communicator;
        }

        @Override
        public void close() {
            close(voidPromise());
        }

        void flushMore() {
            flush0();
        }

        void writeFailed(Throwable t) {
            handleWriteError(t);
        }

        @Override
        protected Executor prepareToClose() {
            // close() may wait to deliver what is unsynced, and an rdma:// close talks to its peer: off the loop;
            // no read starts meanwhile
            active = false;
            return communicator != null || connecting != null ? Blocking.EXECUTOR : null;
        }

        @Override
        public void connect(SocketAddress remoteAddress, SocketAddress localAddress, ChannelPromise promise) {
            if (promise.isDone() || !ensureOpen(promise)) {
                return;
            }
            if (connectPromise != null) {
                promise.setFailure(new ConnectionPendingException());
                return;
            }
            if (communicator != null) {
                promise.setFailure(new AlreadyConnectedException());
                return;
            }
            if (localAddress != null && !anyPort(localAddress)) {
                promise.setFailure(new UnsupportedOperationException("a communicator client cannot bind a local"
                        + " address: " + localAddress + " (only port 0, which is ignored)"));
                return;
            }
            Communicator c;
            try {
                String scheme = config.getScheme();
                if (scheme == null) {
                    scheme = ((CommunicatorIoHandler) registration.attachment()).defaultScheme();
                }
                c = Communicators.open(Endpoints.uri(remoteAddress, scheme, config.getEndpointOptions()));
            } catch (Throwable t) {
                promise.setFailure(annotateConnectException(t, remoteAddress));
                closeIfClosed();
                return;
            }
            connecting = c;
            connectPromise = promise;
            int timeoutMillis = config.getConnectTimeoutMillis();
            if (timeoutMillis > 0) {
                connectTimeout = eventLoop().schedule(() -> {
                    ChannelPromise p = connectPromise;
                    if (p != null && p.tryFailure(new ConnectTimeoutException(
                            "connection timed out after " + timeoutMillis + " ms: " + remoteAddress))) {
                        close(voidPromise());
                    }
                }, timeoutMillis, TimeUnit.MILLISECONDS);
            }
            promise.addListener(f -> {
                if (f.isCancelled()) {
                    if (connectTimeout != null) {
                        connectTimeout.cancel(false);
                    }
                    connectPromise = null;
                    close(voidPromise());
                }
            });
            Blocking.EXECUTOR.execute(() -> {
                Throwable failure = null;
                try {
                    c.connect();
                } catch (Throwable t) {
                    failure = t;
                    try {
                        c.close();
                    } catch (IOException ignored) {
                        // the connect failure is the one to report
                    }
                }
                Throwable f = failure;
                eventLoop().execute(() -> finishConnect(c, remoteAddress, f));
            });
        }

        private void finishConnect(Communicator c, SocketAddress requested, Throwable failure) {
            ChannelPromise promise = connectPromise;
            connectPromise = null;
            connecting = null;
            if (connectTimeout != null) {
                connectTimeout.cancel(false);
                connectTimeout = null;
            }
            if (promise == null || promise.isDone() || !open) {
                // timed out, cancelled or closed meanwhile
                try {
                    c.close();
                } catch (IOException ignored) {
                    // nobody waits for this connection any more
                }
                if (promise != null && !promise.isDone()) {
                    promise.tryFailure(annotateConnectException(
                            failure != null ? failure : new java.nio.channels.ClosedChannelException(), requested));
                }
                return;
            }
            if (failure != null) {
                promise.tryFailure(annotateConnectException(failure, requested));
                closeIfClosed();
                close(voidPromise());
                return;
            }
            communicator = c;
            IoRegistration reg = registration;
            if (reg != null) {
                ((CommunicatorIoHandler) reg.attachment()).communicatorChanged();
            }
            if (local == null) {
                // the contract does not say which local address and port a client got: the wildcard address
                local = new InetSocketAddress(0);
            }
            SocketAddress peer = Endpoints.peer(c.peerName());
            remote = peer != null ? peer : requested;
            active = true;
            boolean done = promise.trySuccess();
            pipeline().fireChannelActive();
            if (!done) {
                close(voidPromise());
            }
        }

        @SuppressWarnings("deprecation") // RecvByteBufAllocator.Handle: what AbstractUnsafe hands out
        @Override
        public void handle(IoRegistration r, IoEvent event) {
            armed = false;
            if (!isActive() || inputShutdown) {
                return;
            }
            ChannelPipeline pipeline = pipeline();
            CommunicatorSocketChannelConfig cfg = config;
            if (!readPending && !cfg.isAutoRead()) {
                return; // read() arms again
            }
            RecvByteBufAllocator.Handle allocHandle = recvBufAllocHandle();
            allocHandle.reset(cfg);
            Reads.Outcome outcome = Reads.Outcome.NOTHING;
            Throwable failure = null;
            try {
                outcome = Reads.readAvailable(communicator, pipeline, allocHandle, cfg.getAllocator(), isActive,
                        readServed);
            } catch (Throwable t) {
                failure = t;
            }
            allocHandle.readComplete();
            pipeline.fireChannelReadComplete();
            if (failure != null) {
                pipeline.fireExceptionCaught(failure);
                close(voidPromise());
            } else if (outcome == Reads.Outcome.END) {
                inputEnded();
            } else if (isActive() && (readPending || cfg.isAutoRead())) {
                arm();
            }
        }

        private void inputEnded() {
            if (inputShutdown) {
                return;
            }
            inputShutdown = true;
            if (config.isAllowHalfClosure()) {
                pipeline().fireUserEventTriggered(ChannelInputShutdownEvent.INSTANCE);
                pipeline().fireUserEventTriggered(ChannelInputShutdownReadComplete.INSTANCE);
            } else {
                close(voidPromise());
            }
        }
    }
}
