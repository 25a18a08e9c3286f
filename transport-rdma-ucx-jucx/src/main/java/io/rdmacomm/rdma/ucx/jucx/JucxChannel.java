package io.rdmacomm.rdma.ucx.jucx;

import io.rdmacomm.api.Access;
import io.rdmacomm.api.CommunicatorException;
import io.rdmacomm.api.RegionDescriptor;
import io.rdmacomm.api.RemoteAccessException;
import io.rdmacomm.api.support.Waiter;
import io.rdmacomm.rdma.spi.ChannelHandler;
import io.rdmacomm.rdma.spi.Completion;
import io.rdmacomm.rdma.spi.LocalRegion;
import io.rdmacomm.rdma.spi.RdmaChannel;
import io.rdmacomm.rdma.spi.RegisteredBuffer;
import io.rdmacomm.rdma.spi.RemoteRegion;
import io.rdmacomm.rdma.ucx.SharedEndpoints;
import io.rdmacomm.rdma.ucx.UcxTransports;
import io.rdmacomm.rdma.ucx.UcxWire;
import java.io.IOException;
import java.net.ConnectException;
import java.nio.ByteBuffer;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.openucx.jucx.UcxCallback;
import org.openucx.jucx.ucp.UcpAmData;
import org.openucx.jucx.ucp.UcpEndpoint;
import org.openucx.jucx.ucp.UcpRemoteKey;
import org.openucx.jucx.ucp.UcpRequest;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A channel on one UCP endpoint: its connection state, its {@link JucxMemory}, the {@link JucxRequests} that carry
 * its operations and the {@link JucxInbox} for what arrives. Active message headers start with the receiver's
 * channel id on its node, which the engine's bootstrap exchanged together with the nodes' worker addresses.
 */
final class JucxChannel implements RdmaChannel {
    private static final Logger LOG = LoggerFactory.getLogger(JucxChannel.class);
    private static final long CLOSE_WAIT_NANOS = TimeUnit.SECONDS.toNanos(2);

    private final JucxNode loop;
    private final int id;
    private final String peerName;
    private final boolean eager;
    private final JucxMemory memory;
    private final JucxRequests requests;
    private final JucxInbox inbox;
    /** Connect and close wait with it (woken by the server's id, a failure, completions, progress). */
    private final Waiter waiter;
    volatile UcpEndpoint ep;
    private volatile SharedEndpoints.Shared<UcpEndpoint, JucxChannel> shared;
    volatile ChannelHandler handler;
    volatile int remoteId = -1;
    private volatile IOException failure;
    private final AtomicBoolean closed = new AtomicBoolean();
    /** Calls on the endpoint in progress: close waits until none is before it releases keys and the endpoint. */
    private final AtomicInteger inEndpoint = new AtomicInteger();
    private final UcxCallback wakeOnCompletion = new UcxCallback() {
        @Override
        public void onSuccess(UcpRequest request) {
            waiter.wake();
        }

        @Override
        public void onError(int status, String message) {
            waiter.wake();
        }
    };

    JucxChannel(JucxNode loop, int id, String peerName, boolean eager) {
        this.loop = loop;
        this.id = id;
        this.peerName = peerName;
        this.eager = eager;
        this.memory = new JucxMemory(loop.context, eager);
        this.requests = new JucxRequests(this, loop);
        this.inbox = new JucxInbox(this, memory);
        this.waiter = new Waiter(0, null, () -> false, () -> "to " + peerName);
    }

    @Override
    public String peerName() {
        return peerName;
    }

    // ---- connection ------------------------------------------------------------------------------------------

    @Override
    public int localId() {
        return id;
    }

    /**
     * Takes the node's endpoint to the peer's worker, created from its address on either side (UCX connects lazily,
     * on the first operation; see {@link SharedEndpoints}). No connection manager and no listener: nothing of UCX is
     * reachable before the bootstrap.
     */
    @Override
    public void connect(byte[] peerAddress, int peerChannelId, Role role, long deadline) throws IOException {
        if (ep != null) {
            throw new IllegalStateException("the channel to " + peerName + " is connected already");
        }
        remoteId = peerChannelId;
        try {
            SharedEndpoints.Shared<UcpEndpoint, JucxChannel> s = loop.endpoints.acquire(peerAddress, this);
            shared = s;
            ep = s.endpoint();
        } catch (RuntimeException e) {
            ConnectException ce = new ConnectException("UCX could not reach the worker of " + peerName + ": "
                    + e.getMessage());
            ce.initCause(e);
            throw ce;
        }
    }

    @Override
    public boolean boundsEnforcedByTransport() {
        // not where oneSided=trusted gave peers one-sided access over transports that do not check keys
        return !UcxTransports.oneSidedWithheld();
    }

    /**
     * Enters a call on the endpoint; false once the channel is closed, and the caller must not touch the endpoint
     * (UCX forbids operations on an endpoint being closed). Every true is followed by {@link #exit()}; in between
     * the node's lock is held ({@link JucxNode}).
     */
    boolean enter() {
        inEndpoint.incrementAndGet();
        if (closed.get()) {
            left();
            return false;
        }
        loop.lock();
        return true;
    }

    void exit() {
        loop.unlock();
        left();
    }

    private void left() {
        if (inEndpoint.decrementAndGet() == 0 && closed.get()) {
            waiter.wake();
        }
    }

    /** The reason operations are refused now (closed, failed), or null if they may be issued. */
    IOException refusal() {
        if (closed.get()) {
            return new CommunicatorException("the connection to " + peerName + " is closed");
        }
        IOException f = failure;
        if (f != null) {
            return new CommunicatorException("the connection to " + peerName + " failed: " + f.getMessage(), f);
        }
        return null;
    }

    // ---- memory ----------------------------------------------------------------------------------------------

    @Override
    public LocalRegion register(ByteBuffer buffer, Set<Access> access) throws IOException {
        return memory.register(buffer, access);
    }

    @Override
    public RegisteredBuffer allocate(int length, Set<Access> access) throws IOException {
        return memory.allocate(length, access);
    }

    @Override
    public boolean writesAreOneSided() {
        return !eager;
    }

    @Override
    public boolean placesWritesDirectly() {
        return !eager && UcxTransports.rdmaDevicePresent();
    }

    @Override
    public RemoteRegion unpack(RegionDescriptor descriptor) throws IOException {
        if (!enter()) {
            throw new CommunicatorException("the connection to " + peerName + " is closed");
        }
        try {
            // libucp 1.13 crashed unpacking a key on an endpoint that had failed (endpoint timeout under load)
            IOException refused = refusal();
            if (refused != null) {
                throw refused;
            }
            return memory.unpack(ep, descriptor);
        } finally {
            exit();
        }
    }

    // ---- operations ------------------------------------------------------------------------------------------

    @Override
    public int maxMessageSize() {
        return UcxWire.MAX_CONTROL;
    }

    @Override
    public void send(ByteBuffer message, Completion done) {
        requests.send(message, done);
    }

    @Override
    public void write(LocalRegion src, long srcAddress, RemoteRegion dst, long dstAddress, int length,
            ByteBuffer notification, Completion done) {
        UcpRemoteKey key = JucxMemory.key(dst);
        if (eager || key == null) {
            requests.eagerWrite(srcAddress, dstAddress, length, notification, done);
        } else {
            requests.putWrite(srcAddress, key, dstAddress, length, notification, done);
        }
    }

    @Override
    public void read(RemoteRegion src, long srcAddress, LocalRegion dst, long dstAddress, int length,
            Completion done) {
        UcpRemoteKey key = JucxMemory.key(src);
        if (key == null) {
            done.failed(new RemoteAccessException("one-sided read of " + src.descriptor() + " of " + peerName
                    + " is withheld: the owner's transport does not check remote bounds, so it serves reads itself"));
            return;
        }
        requests.read(key, srcAddress, dstAddress, length, done);
    }

    // ---- events ----------------------------------------------------------------------------------------------

    /** An active message for this channel, on the progress thread. */
    void onAm(int type, ByteBuffer header, UcpAmData data) {
        if (closed.get()) {
            return;
        }
        switch (type) {
            case UcxWire.AM_CONTROL -> inbox.onControl(data);
            case UcxWire.AM_WRITE -> inbox.onWrite(header, data);
            default -> LOG.warn("unknown active message {} from {}", type, peerName);
        }
    }

    /** Hands a message to the handler, unless the channel was closed. */
    void deliver(ByteBuffer message) {
        ChannelHandler h = handler;
        if (h != null && !closed.get()) {
            h.onMessage(message);
        }
    }

    void onEpError(UcpEndpoint endpoint, int status, String message) {
        failConnection(new CommunicatorException("connection to " + peerName + " failed: " + message
                + " (UCX status " + status + ")", status, null));
    }

    /** The connection failed: recorded once, reported to the handler. */
    void failConnection(IOException cause) {
        if (failure != null) {
            return;
        }
        failure = cause;
        waiter.wake();
        ChannelHandler h = handler;
        if (h != null && !closed.get()) {
            h.onError(cause);
        }
    }

    // ---- close -----------------------------------------------------------------------------------------------

    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        try {
            waiter.awaitUninterruptibly(() -> inEndpoint.get() == 0, Waiter.deadlineAfter(CLOSE_WAIT_NANOS),
                    "closing (waiting for calls on the endpoint)");
        } catch (IOException e) {
            LOG.warn("closing the endpoint to {} while a call on it did not return within {} ms", peerName,
                    TimeUnit.NANOSECONDS.toMillis(CLOSE_WAIT_NANOS));
        }
        memory.releaseRemotes();
        UcpEndpoint e = ep;
        SharedEndpoints.Shared<UcpEndpoint, JucxChannel> s = shared;
        if (e != null && loop.endpoints.release(s, this)) {
            loop.begin();
            try {
                // a flush-close of an endpoint that cannot flush (never connected, peer gone) stays pending
                // forever and then trips an assertion in ucp_worker_destroy: flush first, force if that hangs
                boolean flushed = false;
                if (failure == null && remoteId >= 0) {
                    try {
                        flushed = waitFor(locked(() -> e.flushNonBlocking(wakeOnCompletion))) && failure == null;
                    } catch (RuntimeException ex) {
                        LOG.debug("flushing the endpoint to {}: {}", peerName, ex.toString());
                    }
                }
                boolean flush = flushed;
                if (!waitFor(locked(() -> flush ? e.closeNonBlockingFlush() : e.closeNonBlockingForce()))) {
                    LOG.warn("closing the endpoint to {} did not complete within {} ms", peerName,
                            TimeUnit.NANOSECONDS.toMillis(CLOSE_WAIT_NANOS));
                }
            } catch (RuntimeException ex) {
                LOG.debug("closing the endpoint to {}: {}", peerName, ex.toString());
            } finally {
                loop.end();
            }
        }
        memory.releaseRegions();
        loop.remove(id);
    }

    /** Issues a request with the node's lock held. */
    private UcpRequest locked(Supplier<UcpRequest> issue) {
        loop.lock();
        try {
            return issue.get();
        } finally {
            loop.unlock();
        }
    }

    /**
     * Waits (bounded, and not cut short by an interrupt: the worker must not be destroyed with a request pending)
     * for a request of close; false if it did not complete.
     */
    private boolean waitFor(UcpRequest request) {
        // a close request takes no callback: the worker's progress wakes the wait
        loop.watchProgress(waiter);
        try {
            waiter.awaitUninterruptibly(request::isCompleted, Waiter.deadlineAfter(CLOSE_WAIT_NANOS),
                    "closing the endpoint");
            return true;
        } catch (IOException e) {
            return false;
        } finally {
            loop.unwatchProgress(waiter);
        }
    }
}
