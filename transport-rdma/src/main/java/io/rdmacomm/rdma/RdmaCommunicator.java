package io.rdmacomm.rdma;

import io.rdmacomm.api.Access;
import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.Endpoint;
import io.rdmacomm.api.EndpointOption;
import io.rdmacomm.api.MemoryRegion;
import io.rdmacomm.api.RegionDescriptor;
import io.rdmacomm.api.Units;
import io.rdmacomm.rdma.spi.RdmaChannel;
import io.rdmacomm.rdma.spi.RdmaListener;
import io.rdmacomm.rdma.spi.RdmaProvider;
import io.rdmacomm.api.support.AbstractCommunicator;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.ConnectException;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.channels.AsynchronousCloseException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An {@code rdma://} communicator. Differences from the contract: {@link #sync()} returns once the bytes are
 * placed in the peer's registered memory; a server completes handshakes on its own thread
 * ({@code rdmacomm-rdma-accept}), so a client's {@code connect()} does not wait for {@code accept()}.
 */
public final class RdmaCommunicator extends AbstractCommunicator<RdmaCommunicator.ConnectionLink> {
    private static final Logger LOG = LoggerFactory.getLogger(RdmaCommunicator.class);
    private static final long ACCEPT_SLICE_NANOS = TimeUnit.MILLISECONDS.toNanos(50);

    private final RdmaProvider provider;
    private volatile RdmaListener listener;
    private volatile Thread acceptor;
    private final ConcurrentLinkedQueue<Connection> arrived = new ConcurrentLinkedQueue<>();
    private final LinkedBlockingQueue<Connection> ready = new LinkedBlockingQueue<>();

    RdmaCommunicator(Endpoint endpoint, RdmaProvider provider) {
        super(endpoint);
        this.provider = provider;
    }

    private RdmaCommunicator(Endpoint serverEndpoint, RdmaProvider provider, Connection accepted) {
        super(serverEndpoint, new ConnectionLink(accepted));
        this.provider = provider;
    }

    @Override
    protected Endpoint listen() throws IOException {
        RdmaListener l;
        try {
            l = provider.listen(endpoint().socketAddress(), this::arrived);
        } catch (IOException e) {
            throw new IOException("cannot serve " + endpoint() + ": " + e.getMessage(), e);
        }
        listener = l;
        Thread t = new Thread(this::handshakes, "rdmacomm-rdma-accept");
        t.setDaemon(true);
        acceptor = t;
        t.start();
        return endpoint().withPort(l.address().getPort());
    }

    private Connection arrived(RdmaChannel channel) {
        Connection c = new Connection(endpoint());
        c.attach(channel);
        arrived.add(c);
        Thread t = acceptor;
        if (t != null) {
            LockSupport.unpark(t);
        }
        return c;
    }

    /** The accept thread: completes server handshakes, dropping peers that fail or stay silent. */
    private void handshakes() {
        long timeout = endpoint().duration(EndpointOption.HANDSHAKE_TIMEOUT).toNanos();
        List<Connection> pending = new ArrayList<>();
        List<Long> deadlines = new ArrayList<>();
        Thread me = Thread.currentThread();
        while (isOpen()) {
            for (Connection c; (c = arrived.poll()) != null;) {
                c.watch(me);
                pending.add(c);
                deadlines.add(System.nanoTime() + timeout);
            }
            Iterator<Long> d = deadlines.iterator();
            for (Iterator<Connection> it = pending.iterator(); it.hasNext();) {
                Connection c = it.next();
                long deadline = d.next();
                if (c.helloArrived()) {
                    it.remove();
                    d.remove();
                    c.unwatch(me);
                    try {
                        c.serverHandshake();
                        ready.add(c);
                    } catch (IOException | RuntimeException e) {
                        LOG.warn("{}: dropped peer {}: {}", endpoint(), c.peerName(), e.getMessage());
                        c.close();
                    }
                } else if (System.nanoTime() - deadline >= 0) {
                    it.remove();
                    d.remove();
                    LOG.warn("{}: dropped peer {}: no handshake within {}", endpoint(), c.peerName(),
                            Units.formatDuration(Duration.ofNanos(timeout)));
                    c.close();
                }
            }
            LockSupport.parkNanos(this, ACCEPT_SLICE_NANOS);
        }
        pending.forEach(Connection::close);
    }

    @Override
    protected Communicator acceptNext() throws IOException {
        Duration timeout = endpoint().duration(EndpointOption.ACCEPT_TIMEOUT);
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            long wait = ACCEPT_SLICE_NANOS;
            if (!timeout.isZero()) {
                wait = Math.min(wait, deadline - System.nanoTime());
                if (wait <= 0) {
                    throw new SocketTimeoutException("accept on " + endpoint() + " timed out after "
                            + Units.formatDuration(timeout));
                }
            }
            Connection c;
            try {
                c = ready.poll(wait, TimeUnit.NANOSECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new InterruptedIOException("accept on " + endpoint() + " interrupted");
            }
            if (!isOpen()) {
                if (c != null) {
                    c.close();
                }
                throw new AsynchronousCloseException();
            }
            if (c != null) {
                return new RdmaCommunicator(endpoint(), provider, c);
            }
        }
    }

    @Override
    protected ConnectionLink dial() throws IOException {
        Duration timeout = endpoint().duration(EndpointOption.CONNECT_TIMEOUT);
        long deadline = System.nanoTime() + timeout.toNanos();
        Connection c = new Connection(endpoint());
        abortDialWith(c::close);
        try {
            RdmaChannel ch;
            try {
                ch = provider.connect(endpoint().socketAddress(), timeout, c);
            } catch (ConnectException e) {
                ConnectException named = new ConnectException("connect to " + endpoint() + " failed: "
                        + e.getMessage());
                named.initCause(e);
                throw named;
            } catch (SocketTimeoutException e) {
                SocketTimeoutException named = new SocketTimeoutException("connect to " + endpoint()
                        + " timed out after " + Units.formatDuration(timeout));
                named.initCause(e);
                throw named;
            }
            c.attach(ch);
            c.clientHandshake(deadline);
            return new ConnectionLink(c);
        } catch (IOException | RuntimeException e) {
            c.close();
            throw e;
        }
    }

    @Override
    protected void stopServing() {
        listener.close();
        Thread t = acceptor;
        LockSupport.unpark(t);
        try {
            t.join(TimeUnit.SECONDS.toMillis(5));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (t.isAlive()) {
            LOG.warn("{}: accept thread did not stop within 5 s", endpoint());
        }
        for (Connection r; (r = ready.poll()) != null;) {
            r.close();
        }
        for (Connection r; (r = arrived.poll()) != null;) {
            r.close();
        }
    }

    /** The RDMA provider this communicator runs on ({@code ucx-ffm}, {@code ucx-jucx}, {@code verbs}). */
    public String providerName() {
        return provider.name();
    }

    /** This connection's counters; zero for a communicator that is not connected. */
    public RdmaStatistics statistics() {
        ConnectionLink l = link();
        return l == null ? new RdmaStatistics(0, 0)
                : new RdmaStatistics(l.connection.registeredBytes(), l.connection.zeroCopyBytes());
    }

    /** A {@link Connection} as the communicator's link: its package-level calls, one to one. */
    static final class ConnectionLink implements AbstractCommunicator.Link {
        final Connection connection;

        ConnectionLink(Connection connection) {
            this.connection = connection;
        }

        @Override
        public String peerName() {
            return connection.peerName();
        }

        @Override
        public int read(ByteBuffer dst) throws IOException {
            return connection.read(dst);
        }

        @Override
        public void write(ByteBuffer src) throws IOException {
            connection.write(src);
        }

        @Override
        public void sync() throws IOException {
            connection.sync();
        }

        @Override
        public MemoryRegion register(ByteBuffer buffer, Set<Access> access) throws IOException {
            return connection.register(buffer, access);
        }

        @Override
        public void put(ByteBuffer src, RegionDescriptor remote, long offset) throws IOException {
            connection.put(src, remote, offset);
        }

        @Override
        public void get(RegionDescriptor remote, long offset, ByteBuffer dst) throws IOException {
            connection.get(remote, offset, dst);
        }

        @Override
        public void close() {
            connection.close();
        }
    }
}
