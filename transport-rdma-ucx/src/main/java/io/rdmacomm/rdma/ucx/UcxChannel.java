package io.rdmacomm.rdma.ucx;

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
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * What a channel of either UCX provider is alike: on its node's endpoint to the peer's worker (shared with the node's
 * other channels to that worker, {@link SharedEndpoints}), with its {@link UcxMemory}, speaking {@link UcxWire} to the
 * peer's channel {@link #remoteId()}. Every call on the endpoint runs between {@link #enter()} and {@link #exit()};
 * close marks the channel closed and waits until no call is inside before it closes the endpoint, since libucp
 * crashes (not fails) on an endpoint it has freed.
 *
 * @param <E> the binding's endpoint type
 * @param <M> the provider's memory
 */
public abstract class UcxChannel<E, M extends UcxMemory<E, ?>> implements RdmaChannel {
    /** The peer, for messages. */
    protected final String peerName;
    /**
     * Where one-sided access is withheld from peers (shared memory, tcp): writes are active messages carrying the
     * data, which the target checks and places; gets are the engine's.
     */
    protected final boolean eager;
    /** This channel's regions and the peer's unpacked ones. */
    protected final M memory;
    /** Connect and close wait with it (woken by a failure, completions, progress, the last call leaving). */
    protected final Waiter waiter;
    /** The node's endpoint to the peer's worker, once connected. */
    protected volatile E ep;
    private volatile ChannelHandler handler;
    /** The peer's channel id, once known; the receiver field of every message sent. */
    private volatile int remoteId = -1;
    private volatile IOException failure;
    private final AtomicBoolean closed = new AtomicBoolean();
    /** Calls on the endpoint in progress: close waits until none is before it releases keys and the endpoint. */
    private final AtomicInteger inEndpoint = new AtomicInteger();

    /**
     * @param peerName the peer, for messages
     * @param eager whether the node withholds one-sided access (writes travel as active messages)
     * @param memory the channel's memory, made for {@code eager}
     * @param handler the channel's handler, or null until {@link #handler(ChannelHandler)}
     */
    protected UcxChannel(String peerName, boolean eager, M memory, ChannelHandler handler) {
        this.peerName = peerName;
        this.eager = eager;
        this.memory = memory;
        this.handler = handler;
        this.waiter = new Waiter(0, null, () -> false, () -> "to " + peerName);
    }

    @Override
    public final String peerName() {
        return peerName;
    }

    /** The channel's handler, or null. */
    public final ChannelHandler handler() {
        return handler;
    }

    /** Sets the channel's handler. */
    public final void handler(ChannelHandler h) {
        handler = h;
    }

    /** The node's endpoint to the peer, or null before {@code connect}. */
    public final E endpoint() {
        return ep;
    }

    /** The peer's channel id, -1 before {@code connect}. */
    public final int remoteId() {
        return remoteId;
    }

    /** Records the peer's channel id, to which every message goes. */
    protected final void remoteId(int id) {
        remoteId = id;
    }

    /** Whether the connection failed. */
    protected final boolean failed() {
        return failure != null;
    }

    /** Whether {@code close} was called. */
    public final boolean isClosed() {
        return closed.get();
    }

    @Override
    public final boolean boundsEnforcedByTransport() {
        // not where oneSided=trusted gave peers one-sided access over transports that do not check keys
        return !UcxTransports.oneSidedWithheld();
    }

    /** Takes the node's lock, and whatever else a call on the endpoint needs; by {@link #enter()}. */
    protected abstract void lockNode();

    /** Undoes {@link #lockNode()}; by {@link #exit()}. */
    protected abstract void unlockNode();

    /**
     * Enters a call on the endpoint; false once the channel is closed, and the caller must not touch the endpoint
     * (UCX forbids operations on an endpoint being closed). Every true is followed by {@link #exit()}; in between
     * the node's lock is held.
     */
    public final boolean enter() {
        inEndpoint.incrementAndGet();
        if (closed.get()) {
            left();
            return false;
        }
        lockNode();
        return true;
    }

    /** Leaves a call {@link #enter()} let in. */
    public final void exit() {
        unlockNode();
        left();
    }

    private void left() {
        if (inEndpoint.decrementAndGet() == 0 && closed.get()) {
            waiter.wake();
        }
    }

    /** The reason operations are refused now (closed, failed), or null if they may be issued. */
    public final IOException refusal() {
        if (closed.get()) {
            return new CommunicatorException("the connection to " + peerName + " is closed");
        }
        IOException f = failure;
        if (f != null) {
            return new CommunicatorException("the connection to " + peerName + " failed: " + f.getMessage(), f);
        }
        return null;
    }

    @Override
    public final LocalRegion register(ByteBuffer buffer, Set<Access> access) throws IOException {
        return memory.register(buffer, access);
    }

    @Override
    public final RegisteredBuffer allocate(int length, Set<Access> access) throws IOException {
        return memory.allocate(length, access);
    }

    @Override
    public final boolean writesAreOneSided() {
        return !eager;
    }

    @Override
    public final boolean placesWritesDirectly() {
        return !eager && UcxTransports.rdmaDevicePresent();
    }

    @Override
    public final RemoteRegion unpack(RegionDescriptor descriptor) throws IOException {
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

    /** {@link UcxWire#MAX_CONTROL}, which both UCX providers send and accept. */
    @Override
    public final int maxMessageSize() {
        return UcxWire.MAX_CONTROL;
    }

    /** Fails a read of {@code src}, whose owner sent no key: it serves reads itself, through the engine. */
    protected final void refuseWithheldRead(RemoteRegion src, Completion done) {
        done.failed(new RemoteAccessException("one-sided read of " + src.descriptor() + " of " + peerName
                + " is withheld: the owner's transport does not check remote bounds, so it serves reads itself"));
    }

    /** The connection failed: recorded once, reported to the handler. */
    public final void failConnection(IOException cause) {
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

    /** Hands {@code message} to the handler at once, unless the channel was closed. */
    protected final void deliverNow(ByteBuffer message) {
        ChannelHandler h = handler;
        if (h != null && !closed.get()) {
            h.onMessage(message);
        }
    }

    /** Marks the channel closed: true for the one call that does, false for every later one. */
    protected final boolean markClosed() {
        return closed.compareAndSet(false, true);
    }

    /** After {@link #markClosed()}: waits up to {@code nanos} for the calls on the endpoint to leave; false if not. */
    protected final boolean awaitNoCalls(long nanos) {
        try {
            waiter.awaitUninterruptibly(() -> inEndpoint.get() == 0, Waiter.deadlineAfter(nanos),
                    "closing (waiting for calls on the endpoint)");
            return true;
        } catch (IOException e) {
            return false;
        }
    }
}
