package io.rdmacomm.rdma.ucx.jucx;

import io.rdmacomm.api.CommunicatorException;
import io.rdmacomm.api.support.Waiter;
import io.rdmacomm.rdma.spi.Completion;
import io.rdmacomm.rdma.spi.LocalRegion;
import io.rdmacomm.rdma.spi.RemoteRegion;
import io.rdmacomm.rdma.ucx.SharedEndpoints;
import io.rdmacomm.rdma.ucx.UcxChannel;
import io.rdmacomm.rdma.ucx.UcxWire;
import java.io.IOException;
import java.net.ConnectException;
import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;
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
final class JucxChannel extends UcxChannel<UcpEndpoint, JucxMemory> {
    private static final Logger LOG = LoggerFactory.getLogger(JucxChannel.class);
    private static final long CLOSE_WAIT_NANOS = TimeUnit.SECONDS.toNanos(2);

    private final JucxNode loop;
    private final int id;
    private final JucxRequests requests;
    private final JucxInbox inbox;
    private volatile SharedEndpoints.Shared<UcpEndpoint, JucxChannel> shared;
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
        super(peerName, eager, new JucxMemory(loop.context, eager), null);
        this.loop = loop;
        this.id = id;
        this.requests = new JucxRequests(this, loop);
        this.inbox = new JucxInbox(this, memory);
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
        remoteId(peerChannelId);
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
    protected void lockNode() {
        loop.lock();
    }

    @Override
    protected void unlockNode() {
        loop.unlock();
    }

    // ---- operations ------------------------------------------------------------------------------------------

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
            refuseWithheldRead(src, done);
            return;
        }
        requests.read(key, srcAddress, dstAddress, length, done);
    }

    // ---- events ----------------------------------------------------------------------------------------------

    /** An active message for this channel, on the progress thread. */
    void onAm(int type, ByteBuffer header, UcpAmData data) {
        if (isClosed()) {
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
        deliverNow(message);
    }

    void onEpError(UcpEndpoint endpoint, int status, String message) {
        failConnection(new CommunicatorException("connection to " + peerName + " failed: " + message
                + " (UCX status " + status + ")", status, null));
    }

    // ---- close -----------------------------------------------------------------------------------------------

    @Override
    public void close() {
        if (!markClosed()) {
            return;
        }
        if (!awaitNoCalls(CLOSE_WAIT_NANOS)) {
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
                if (!failed() && remoteId() >= 0) {
                    try {
                        flushed = waitFor(locked(() -> e.flushNonBlocking(wakeOnCompletion))) && !failed();
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
