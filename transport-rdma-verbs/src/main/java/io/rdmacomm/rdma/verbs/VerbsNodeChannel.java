package io.rdmacomm.rdma.verbs;

import io.rdmacomm.api.Access;
import io.rdmacomm.api.CommunicatorException;
import io.rdmacomm.api.RegionDescriptor;
import io.rdmacomm.rdma.spi.ChannelHandler;
import io.rdmacomm.rdma.spi.Completion;
import io.rdmacomm.rdma.spi.LocalRegion;
import io.rdmacomm.rdma.spi.RdmaChannel;
import io.rdmacomm.rdma.spi.RegisteredBuffer;
import io.rdmacomm.rdma.spi.RemoteRegion;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A channel of a {@link VerbsNode}: unconnected until its queue pair exists (ACTIVE: made by {@link #connect};
 * PASSIVE: bound by the node when the peer's queue pair claims this channel's id), then every operation goes to
 * that {@link VerbsChannel}. Operations before then fail with "not connected".
 */
final class VerbsNodeChannel implements RdmaChannel {
    private final VerbsNode node;
    private final int id;
    private final String peerName;
    private final ChannelHandler handler;
    private final AtomicBoolean closed = new AtomicBoolean();
    private volatile VerbsChannel qp;

    VerbsNodeChannel(VerbsNode node, int id, String peerName, ChannelHandler handler) {
        this.node = node;
        this.id = id;
        this.peerName = peerName;
        this.handler = handler;
    }

    ChannelHandler handler() {
        return handler;
    }

    @Override
    public int localId() {
        return id;
    }

    /** ACTIVE: rdma-cm to the peer node, then the claim of the peer's channel; PASSIVE: waits for the claim. */
    @Override
    public void connect(byte[] peerAddress, int peerChannelId, Role role, long deadline) throws IOException {
        if (role == Role.PASSIVE) {
            node.await(this);
            return;
        }
        Duration left = Duration.ofNanos(Math.max(1, deadline - System.nanoTime()));
        VerbsChannel ch = node.provider().connect(VerbsNode.cmAddress(peerAddress), left, handler);
        ByteBuffer claim = ByteBuffer.allocate(VerbsNode.CLAIM_LENGTH).putInt(0, peerChannelId);
        ch.send(claim, new Completion() {
            @Override
            public void completed() {
            }

            @Override
            public void failed(IOException cause) {
                handler.onError(cause);
            }
        });
        bind(ch);
    }

    void bind(VerbsChannel ch) {
        qp = ch;
        if (closed.get()) {
            ch.close();
        }
    }

    private VerbsChannel qp() throws IOException {
        VerbsChannel q = qp;
        if (q == null) {
            throw new CommunicatorException("the verbs channel to " + peerName + " is not connected yet");
        }
        return q;
    }

    @Override
    public boolean boundsEnforcedByTransport() {
        return true;
    }

    @Override
    public String peerName() {
        return peerName;
    }

    @Override
    public LocalRegion register(ByteBuffer buffer, Set<Access> access) throws IOException {
        return qp().register(buffer, access);
    }

    @Override
    public RegisteredBuffer allocate(int length, Set<Access> access) throws IOException {
        return qp().allocate(length, access);
    }

    @Override
    public RemoteRegion unpack(RegionDescriptor descriptor) throws IOException {
        return qp().unpack(descriptor);
    }

    @Override
    public int maxMessageSize() {
        return node.provider().maxMessageSize();
    }

    @Override
    public void send(ByteBuffer message, Completion done) {
        VerbsChannel q = qp;
        if (q == null) {
            done.failed(new CommunicatorException("the verbs channel to " + peerName + " is not connected yet"));
        } else {
            q.send(message, done);
        }
    }

    @Override
    public void write(LocalRegion src, long srcAddress, RemoteRegion dst, long dstAddress, int length,
            ByteBuffer notification, Completion done) {
        VerbsChannel q = qp;
        if (q == null) {
            done.failed(new CommunicatorException("the verbs channel to " + peerName + " is not connected yet"));
        } else {
            q.write(src, srcAddress, dst, dstAddress, length, notification, done);
        }
    }

    @Override
    public void read(RemoteRegion src, long srcAddress, LocalRegion dst, long dstAddress, int length,
            Completion done) {
        VerbsChannel q = qp;
        if (q == null) {
            done.failed(new CommunicatorException("the verbs channel to " + peerName + " is not connected yet"));
        } else {
            q.read(src, srcAddress, dst, dstAddress, length, done);
        }
    }

    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        node.forget(this);
        VerbsChannel q = qp;
        if (q != null) {
            q.close();
        }
    }
}
