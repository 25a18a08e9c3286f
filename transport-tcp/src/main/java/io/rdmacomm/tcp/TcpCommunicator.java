package io.rdmacomm.tcp;

import io.rdmacomm.api.Access;
import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.Endpoint;
import io.rdmacomm.api.HandshakeException;
import io.rdmacomm.api.MemoryRegion;
import io.rdmacomm.api.RegionDescriptor;
import java.io.IOException;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.SocketTimeoutException;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.AsynchronousCloseException;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.ClosedSelectorException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.nio.channels.UnresolvedAddressException;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@code tcp://} communicator. Stream bytes travel in frames (see the package documentation), so a raw
 * socket peer cannot talk to it. {@link #sync()} returns once the bytes are in the kernel's socket buffer.
 *
 * <p>One-sided operations are emulated by frames on the same connection, so they queue behind stream bytes: when
 * a side's stream input is full because its application reads nothing, put and get through that connection wait
 * until it reads. From the first {@code register}, {@code put} or {@code get} on a connection, a progress thread
 * reads its socket and {@code read} takes stream bytes from that thread, one hand-off more per read.
 */
public final class TcpCommunicator implements Communicator {
    private static final Logger LOG = LoggerFactory.getLogger(TcpCommunicator.class);

    private final Object lock = new Object();
    private final Settings settings;
    private volatile Endpoint endpoint;
    private volatile TcpServer server;
    private volatile TcpConnection connection;
    private volatile boolean closed;
    private boolean connecting;
    private SocketChannel connectingChannel;
    private Selector connectingSelector;

    TcpCommunicator(Endpoint endpoint) {
        this.endpoint = endpoint;
        this.settings = Settings.of(endpoint);
    }

    private TcpCommunicator(Endpoint endpoint, Settings settings, TcpConnection connection) {
        this.endpoint = endpoint;
        this.settings = settings;
        this.connection = connection;
    }

    @Override
    public Endpoint endpoint() {
        return endpoint;
    }

    @Override
    public String peerName() {
        TcpConnection c = connection;
        return c == null ? "unconnected" : c.peer();
    }

    @Override
    public void serve() throws IOException {
        synchronized (lock) {
            checkNotClosed();
            checkUnused("serve");
            server = TcpServer.bind(endpoint, settings);
            endpoint = server.endpoint();
        }
    }

    @Override
    public Communicator accept() throws IOException {
        checkNotClosed();
        TcpServer s = server;
        if (s == null) {
            throw new IllegalStateException("accept() on " + endpoint + " before serve()");
        }
        for (;;) {
            SocketChannel channel;
            try {
                channel = s.accept();
            } catch (ClosedChannelException e) {
                throw closed ? e : new AsynchronousCloseException();
            }
            try {
                return new TcpCommunicator(endpoint, settings, TcpConnection.open(channel, endpoint, settings));
            } catch (IOException e) {
                LOG.warn("{}: dropped a handshaken peer that could not be set up: {}", endpoint, e.toString());
            }
        }
    }

    @Override
    public void connect() throws IOException {
        SocketChannel channel;
        Selector selector;
        synchronized (lock) {
            checkNotClosed();
            checkUnused("connect");
            connecting = true;
            channel = SocketChannel.open();
            try {
                selector = Selector.open();
            } catch (IOException e) {
                channel.close();
                connecting = false;
                throw e;
            }
            connectingChannel = channel;
            connectingSelector = selector;
        }
        TcpConnection c = null;
        try {
            handshake(channel, selector);
            selector.close(); // deregisters the channel so it may turn blocking
            c = TcpConnection.open(channel, endpoint, settings);
        } catch (ClosedChannelException | ClosedSelectorException e) {
            if (closed) {
                throw new AsynchronousCloseException();
            }
            throw e;
        } finally {
            synchronized (lock) {
                connecting = false;
                connectingChannel = null;
                connectingSelector = null;
                if (c != null && !closed) {
                    connection = c;
                } else if (c != null) {
                    c.close();
                } else {
                    TcpServer.closeQuietly(selector);
                    TcpServer.closeQuietly(channel);
                }
            }
        }
        if (connection != c) {
            throw new AsynchronousCloseException();
        }
    }

    /** Connects and handshakes in non-blocking mode so that {@code connectTimeout} bounds both. */
    private void handshake(SocketChannel channel, Selector selector) throws IOException {
        String where = endpoint.scheme() + "://" + endpoint.authority();
        long timeout = settings.connectTimeout();
        long deadline = System.nanoTime() + (timeout == 0 ? Settings.FOREVER : timeout);
        InetSocketAddress address = endpoint.socketAddress();
        if (address.isUnresolved()) {
            throw new ConnectException("cannot connect to " + where + ": unknown host '" + endpoint.host() + "'");
        }
        channel.configureBlocking(false);
        channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
        SelectionKey key = channel.register(selector, 0);
        try {
            if (!channel.connect(address)) {
                key.interestOps(SelectionKey.OP_CONNECT);
                while (!channel.finishConnect()) {
                    waitUntil(selector, deadline, timeout, where, "connecting");
                }
            }
        } catch (ConnectException e) {
            ConnectException ce = new ConnectException("cannot connect to " + where + ": " + e.getMessage());
            ce.initCause(e);
            throw ce;
        } catch (UnresolvedAddressException e) {
            throw new ConnectException("cannot connect to " + where + ": unknown host '" + endpoint.host() + "'");
        } catch (SocketTimeoutException | ClosedChannelException e) {
            throw e;
        } catch (IOException e) {
            ConnectException ce = new ConnectException("cannot connect to " + where + ": " + e);
            ce.initCause(e);
            throw ce;
        }
        ByteBuffer hello = ByteBuffer.allocate(Wire.HANDSHAKE_BYTES);
        Wire.putHandshake(hello, (short) 0);
        hello.flip();
        key.interestOps(SelectionKey.OP_WRITE);
        while (hello.hasRemaining()) {
            if (channel.write(hello) == 0) {
                waitUntil(selector, deadline, timeout, where, "sending the handshake to");
            }
        }
        ByteBuffer reply = ByteBuffer.allocate(Wire.HANDSHAKE_BYTES);
        key.interestOps(SelectionKey.OP_READ);
        while (reply.hasRemaining()) {
            int n = channel.read(reply);
            if (n < 0) {
                break;
            }
            if (n == 0) {
                waitUntil(selector, deadline, timeout, where, "waiting for the handshake of");
            }
        }
        HandshakeException refused = Wire.checkServerReply(reply, reply.position(), "peer " + where);
        if (refused != null) {
            throw refused;
        }
    }

    private void waitUntil(Selector selector, long deadline, long timeout, String where, String doing)
            throws IOException {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
            throw new SocketTimeoutException("timed out after " + Settings.format(timeout) + " (connectTimeout) "
                    + doing + " " + where);
        }
        selector.select(timeout == 0 ? 0 : TimeUnit.NANOSECONDS.toMillis(left) + 1);
        selector.selectedKeys().clear();
        if (closed) {
            throw new AsynchronousCloseException();
        }
    }

    @Override
    public int read(ByteBuffer dst) throws IOException {
        return connected().read(dst);
    }

    @Override
    public void write(ByteBuffer src) throws IOException {
        connected().write(src);
    }

    @Override
    public void sync() throws IOException {
        connected().sync();
    }

    @Override
    public MemoryRegion register(ByteBuffer buffer, Set<Access> access) throws IOException {
        return connected().register(buffer, access);
    }

    @Override
    public void put(ByteBuffer src, RegionDescriptor remote, long offset) throws IOException {
        connected().put(src, remote, offset);
    }

    @Override
    public void get(RegionDescriptor remote, long offset, ByteBuffer dst) throws IOException {
        connected().get(remote, offset, dst);
    }

    @Override
    public boolean isOpen() {
        return !closed;
    }

    @Override
    public void close() {
        TcpServer s;
        TcpConnection c;
        synchronized (lock) {
            if (closed) {
                return;
            }
            closed = true;
            s = server;
            c = connection;
            if (connectingChannel != null) {
                TcpServer.closeQuietly(connectingChannel);
                connectingSelector.wakeup();
            }
        }
        if (s != null) {
            s.close();
        }
        if (c != null) {
            c.close();
        }
    }

    private TcpConnection connected() throws IOException {
        TcpConnection c = connection;
        if (c == null) {
            checkNotClosed();
            throw new IllegalStateException(endpoint + " is not connected: call connect(), or use a communicator"
                    + " returned by accept()");
        }
        return c;
    }

    private void checkNotClosed() throws ClosedChannelException {
        if (closed) {
            throw new ClosedChannelException();
        }
    }

    private void checkUnused(String call) {
        if (server != null) {
            throw new IllegalStateException(call + "() on " + endpoint + ", which already serves");
        }
        if (connection != null || connecting) {
            throw new IllegalStateException(call + "() on " + endpoint + ", which is already connected"
                    + (connecting ? " (connecting)" : ""));
        }
    }

    @Override
    public String toString() {
        return "TcpCommunicator[" + endpoint + (connection != null ? " peer " + peerName() : "")
                + (closed ? " closed" : "") + "]";
    }
}
