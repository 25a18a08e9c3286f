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
import java.io.IOException;
import java.net.ConnectException;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.channels.AsynchronousCloseException;
import java.nio.channels.ClosedChannelException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An {@code rdma://} communicator. Differences from the contract: {@link #sync()} returns once the bytes are
 * placed in the peer's registered memory; a server completes handshakes on its own thread
 * ({@code rdmacomm-rdma-accept}), so a client's {@code connect()} does not wait for {@code accept()}.
 */
public final class RdmaCommunicator implements Communicator {
    private static final Logger LOG = LoggerFactory.getLogger(RdmaCommunicator.class);
    private static final long ACCEPT_SLICE_NANOS = TimeUnit.MILLISECONDS.toNanos(50);

    private enum State { NEW, SERVING, CONNECTED }

    private final RdmaProvider provider;
    private final AtomicBoolean closed = new AtomicBoolean();
    private volatile Endpoint endpoint;
    private volatile State state = State.NEW;
    private volatile Connection connection;

    private RdmaListener listener;
    private Thread acceptor;
    private final ConcurrentLinkedQueue<Connection> arrived = new ConcurrentLinkedQueue<>();
    private final LinkedBlockingQueue<Connection> ready = new LinkedBlockingQueue<>();

    RdmaCommunicator(Endpoint endpoint, RdmaProvider provider) {
        this.endpoint = endpoint;
        this.provider = provider;
    }

    private RdmaCommunicator(Endpoint serverEndpoint, RdmaProvider provider, Connection accepted) {
        this(serverEndpoint, provider);
        this.connection = accepted;
        this.state = State.CONNECTED;
    }

    @Override
    public Endpoint endpoint() {
        return endpoint;
    }

    @Override
    public String peerName() {
        Connection c = connection;
        return c == null ? "unconnected" : c.peerName();
    }

    @Override
    public synchronized void serve() throws IOException {
        checkNotClosed();
        if (state != State.NEW) {
            throw new IllegalStateException(endpoint + " already " + (state == State.SERVING ? "serves" : "connected"));
        }
        try {
            listener = provider.listen(endpoint.socketAddress(), this::arrived);
        } catch (IOException e) {
            throw new IOException("cannot serve " + endpoint + ": " + e.getMessage(), e);
        }
        endpoint = endpoint.withPort(listener.address().getPort());
        acceptor = new Thread(this::handshakes, "rdmacomm-rdma-accept");
        acceptor.setDaemon(true);
        state = State.SERVING;
        acceptor.start();
    }

    private Connection arrived(RdmaChannel channel) {
        Connection c = new Connection(endpoint);
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
        long timeout = endpoint.duration(EndpointOption.HANDSHAKE_TIMEOUT).toNanos();
        List<Connection> pending = new ArrayList<>();
        List<Long> deadlines = new ArrayList<>();
        Thread me = Thread.currentThread();
        while (!closed.get()) {
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
                        LOG.warn("{}: dropped peer {}: {}", endpoint, c.peerName(), e.getMessage());
                        c.close();
                    }
                } else if (System.nanoTime() - deadline >= 0) {
                    it.remove();
                    d.remove();
                    LOG.warn("{}: dropped peer {}: no handshake within {}", endpoint, c.peerName(),
                            Units.formatDuration(Duration.ofNanos(timeout)));
                    c.close();
                }
            }
            LockSupport.parkNanos(this, ACCEPT_SLICE_NANOS);
        }
        pending.forEach(Connection::close);
    }

    @Override
    public Communicator accept() throws IOException {
        checkNotClosed();
        if (state != State.SERVING) {
            throw new IllegalStateException(endpoint + ": accept() before serve()");
        }
        Duration timeout = endpoint.duration(EndpointOption.ACCEPT_TIMEOUT);
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            long wait = ACCEPT_SLICE_NANOS;
            if (!timeout.isZero()) {
                wait = Math.min(wait, deadline - System.nanoTime());
                if (wait <= 0) {
                    throw new SocketTimeoutException("accept on " + endpoint + " timed out after "
                            + Units.formatDuration(timeout));
                }
            }
            Connection c;
            try {
                c = ready.poll(wait, TimeUnit.NANOSECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new java.io.InterruptedIOException("accept on " + endpoint + " interrupted");
            }
            if (closed.get()) {
                if (c != null) {
                    c.close();
                }
                throw new AsynchronousCloseException();
            }
            if (c != null) {
                return new RdmaCommunicator(endpoint, provider, c);
            }
        }
    }

    @Override
    public synchronized void connect() throws IOException {
        checkNotClosed();
        if (state != State.NEW) {
            throw new IllegalStateException(endpoint + " already " + (state == State.SERVING ? "serves" : "connected"));
        }
        Duration timeout = endpoint.duration(EndpointOption.CONNECT_TIMEOUT);
        long deadline = System.nanoTime() + timeout.toNanos();
        Connection c = new Connection(endpoint);
        connection = c;
        try {
            RdmaChannel ch;
            try {
                ch = provider.connect(endpoint.socketAddress(), timeout, c);
            } catch (ConnectException e) {
                ConnectException named = new ConnectException("connect to " + endpoint + " failed: " + e.getMessage());
                named.initCause(e);
                throw named;
            } catch (SocketTimeoutException e) {
                SocketTimeoutException named = new SocketTimeoutException("connect to " + endpoint
                        + " timed out after " + Units.formatDuration(timeout));
                named.initCause(e);
                throw named;
            }
            c.attach(ch);
            c.clientHandshake(deadline);
            state = State.CONNECTED;
        } catch (IOException | RuntimeException e) {
            c.close();
            connection = null;
            throw e;
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

    /** This connection's counters; zero for a communicator that is not connected. */
    public RdmaStatistics statistics() {
        Connection c = connection;
        return c == null ? new RdmaStatistics(0, 0) : new RdmaStatistics(c.registeredBytes(), c.zeroCopyBytes());
    }

    private Connection connected() throws ClosedChannelException {
        checkNotClosed();
        Connection c = connection;
        if (state != State.CONNECTED || c == null) {
            throw new IllegalStateException(endpoint + " is not connected");
        }
        return c;
    }

    private void checkNotClosed() throws ClosedChannelException {
        if (closed.get()) {
            throw new ClosedChannelException();
        }
    }

    @Override
    public boolean isOpen() {
        return !closed.get();
    }

    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        Connection c = connection;
        if (c != null) {
            c.close();
        }
        if (listener != null) {
            listener.close();
        }
        Thread t = acceptor;
        if (t != null) {
            LockSupport.unpark(t);
            try {
                t.join(TimeUnit.SECONDS.toMillis(5));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            if (t.isAlive()) {
                LOG.warn("{}: accept thread did not stop within 5 s", endpoint);
            }
        }
        for (Connection r; (r = ready.poll()) != null;) {
            r.close();
        }
        for (Connection r; (r = arrived.poll()) != null;) {
            r.close();
        }
    }
}
