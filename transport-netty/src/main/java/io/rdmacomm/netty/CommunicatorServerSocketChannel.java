package io.rdmacomm.netty;

import io.netty.channel.AbstractServerChannel;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.ChannelPromise;
import io.netty.channel.EventLoop;
import io.netty.channel.IoEvent;
import io.netty.channel.IoEventLoop;
import io.netty.channel.IoRegistration;
import io.netty.channel.RecvByteBufAllocator;
import io.netty.channel.socket.ServerSocketChannel;
import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.Communicators;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.nio.channels.ClosedChannelException;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * A Netty {@link ServerSocketChannel} over a serving {@link Communicator}: binds a {@link CommunicatorAddress}, or an
 * {@link InetSocketAddress} with the scheme of {@link CommunicatorChannelOption#SCHEME} or of the event loop
 * ({@link CommunicatorIoHandler#newFactory(String)}), and turns each accepted communicator into a
 * {@link CommunicatorSocketChannel}.
 *
 * <p>{@link Communicator#accept()} blocks and has no readiness of its own, so each server channel runs one accept
 * thread; it queues what it accepts and wakes the event loop, which creates the child channels as reads are asked
 * for (auto-read, or {@code read()}).
 */
@SuppressWarnings("this-escape") // the config refers to its channel, as Netty's own channels' do
public class CommunicatorServerSocketChannel extends AbstractServerChannel implements ServerSocketChannel {

    private final CommunicatorServerSocketChannelConfig config = new CommunicatorServerSocketChannelConfig(this);
    private final ConcurrentLinkedQueue<Communicator> accepted = new ConcurrentLinkedQueue<>();
    private volatile Communicator server;
    private volatile boolean open = true;
    private volatile SocketAddress local;
    private IoRegistration registration;
    private boolean readPending;

    public CommunicatorServerSocketChannel() {
    }

    /** The serving communicator, or null before the bind. */
    public Communicator communicator() {
        return server;
    }

    @Override
    public CommunicatorServerSocketChannelConfig config() {
        return config;
    }

    @Override
    public boolean isOpen() {
        return open;
    }

    @Override
    public boolean isActive() {
        return open && server != null;
    }

    /** The bound address where it is an IP address and port (tcp://, rdma://), else null: see {@link #endpointAddress()}. */
    @Override
    public InetSocketAddress localAddress() {
        SocketAddress a = super.localAddress();
        return a instanceof InetSocketAddress ? (InetSocketAddress) a : null;
    }

    @Override
    public InetSocketAddress remoteAddress() {
        return null;
    }

    /** The bound endpoint as a URI, the port picked for port 0 included; null before the bind. */
    public CommunicatorAddress endpointAddress() {
        Communicator s = server;
        return s == null ? null : new CommunicatorAddress(s.endpoint().toString());
    }

    @Override
    protected SocketAddress localAddress0() {
        return local;
    }

    @Override
    protected boolean isCompatible(EventLoop loop) {
        return loop instanceof IoEventLoop && ((IoEventLoop) loop).isCompatible(ServerUnsafe.class);
    }

    @Override
    protected AbstractUnsafe newUnsafe() {
        return new ServerUnsafe();
    }

    @Override
    protected void doRegister(ChannelPromise promise) {
        CommunicatorIoHandler.register(this, (ServerUnsafe) unsafe(), promise, r -> registration = r);
    }

    @Override
    protected void doDeregister() {
        IoRegistration r = registration;
        if (r != null) {
            registration = null;
            r.cancel();
        }
    }

    @Override
    protected void doBind(SocketAddress localAddress) throws Exception {
        String scheme = config.getScheme();
        if (scheme == null) {
            scheme = ((CommunicatorIoHandler) registration.attachment()).defaultScheme();
        }
        Communicator s = Communicators.serve(Endpoints.uri(localAddress, scheme, config.getEndpointOptions()));
        server = s;
        local = Endpoints.address(s.endpoint());
        Thread acceptor = new Thread(() -> acceptLoop(s), "rdmacomm-netty-accept-" + s.endpoint().authority());
        acceptor.setDaemon(true);
        acceptor.start();
    }

    /** On the accept thread: accepts until the server closes. */
    private void acceptLoop(Communicator s) {
        while (open) {
            Communicator c;
            try {
                c = s.accept();
            } catch (ClosedChannelException e) {
                return; // closed (AsynchronousCloseException included)
            } catch (IOException | RuntimeException e) {
                if (!open || !s.isOpen()) {
                    return;
                }
                eventLoop().execute(() -> pipeline().fireExceptionCaught(e));
                continue;
            }
            accepted.add(c);
            IoRegistration r = registration;
            if (!open || r == null || r.submit(CommunicatorIoOps.NOTIFY) < 0) {
                closeAccepted();
                return;
            }
        }
    }

    private void closeAccepted() {
        Communicator c;
        while ((c = accepted.poll()) != null) {
            try {
                c.close();
            } catch (IOException ignored) {
                // a peer nobody took: nothing to tell
            }
        }
    }

    @Override
    protected void doClose() throws Exception {
        open = false;
        Communicator s = server;
        try {
            if (s != null) {
                s.close();
            }
        } finally {
            closeAccepted();
        }
    }

    @Override
    protected void doBeginRead() {
        readPending = true;
        IoRegistration r = registration;
        if (r != null && !accepted.isEmpty()) {
            r.submit(CommunicatorIoOps.NOTIFY);
        }
    }

    final class ServerUnsafe extends AbstractUnsafe implements CommunicatorIoHandle {

        @Override
        public Communicator communicator() {
            return null;
        }

        @Override
        public void close() {
            close(voidPromise());
        }

        @Override
        public void connect(SocketAddress remoteAddress, SocketAddress localAddress, ChannelPromise promise) {
            safeSetFailure(promise, new UnsupportedOperationException("a server channel does not connect"));
        }

        @SuppressWarnings("deprecation") // RecvByteBufAllocator.Handle: what AbstractUnsafe hands out
        @Override
        public void handle(IoRegistration r, IoEvent event) {
            if (!isOpen() || (!readPending && !config.isAutoRead())) {
                return;
            }
            ChannelPipeline pipeline = pipeline();
            RecvByteBufAllocator.Handle allocHandle = recvBufAllocHandle();
            allocHandle.reset(config);
            do {
                Communicator c = accepted.poll();
                if (c == null) {
                    break;
                }
                readPending = false;
                allocHandle.incMessagesRead(1);
                pipeline.fireChannelRead(new CommunicatorSocketChannel(CommunicatorServerSocketChannel.this, c));
            } while (allocHandle.continueReading());
            allocHandle.readComplete();
            pipeline.fireChannelReadComplete();
            if (isOpen() && !accepted.isEmpty() && (readPending || config.isAutoRead())) {
                r.submit(CommunicatorIoOps.NOTIFY);
            }
        }
    }
}
