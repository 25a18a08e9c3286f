package io.rdmacomm.rdma;

import io.rdmacomm.api.CommunicatorException;
import io.rdmacomm.api.Endpoint;
import io.rdmacomm.api.EndpointOption;
import io.rdmacomm.api.Units;
import io.rdmacomm.api.support.Waiter;
import io.rdmacomm.rdma.spi.Completion;
import io.rdmacomm.rdma.spi.RdmaChannel;
import io.rdmacomm.rdma.spi.RdmaNode;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.net.SocketTimeoutException;
import java.nio.channels.ClosedChannelException;
import java.time.Duration;
import java.util.function.BooleanSupplier;

/**
 * What the parts of one connection share: its settings, the provider channel, the connection's state (failed,
 * closed, peer's end of stream), the waiter every blocking call of the connection waits with, the zero-copy
 * registration cache, and sending control messages.
 */
final class ConnectionState implements Waiter.Poller {
    final Endpoint endpoint;
    /** This side's receive ring; a connection agrees on one size for both rings in its bootstrap. */
    volatile int ringSize;
    final int zeroCopyThreshold;
    /** Whether zeroCopyThreshold was set: reads then advertise whatever the provider says. */
    final boolean zeroCopyRequested;
    /** The read timeout in nanoseconds; 0 waits without limit. */
    final long readTimeoutNanos;
    final long handshakeTimeoutNanos;
    /** How long the peer may be silent before the connection fails; 0: liveness is off. */
    final long livenessNanos;
    final Budget budget;
    final Waiter waiter;

    private volatile RdmaChannel channel;
    private volatile RdmaNode node;
    private RegistrationCache cache;
    private volatile IOException failure;
    private volatile boolean established;
    private volatile boolean closed;
    /** The peer's final stream position once its CLOSE arrived, else -1. */
    private volatile long peerFinalPosition = -1;
    private volatile long controlSent;
    /** Woken by the connection's events too, outside its calls (the server's bootstrap thread), or null. */
    private volatile Runnable watcher;
    private volatile Runnable eventHook;
    private volatile Runnable pollingEndedHook;
    /** Completion of control messages: only a failure matters. */
    private final Completion failOnError = new Completion() {
        @Override
        public void completed() {
        }

        @Override
        public void failed(IOException cause) {
            fail(cause);
        }
    };

    ConnectionState(Endpoint endpoint) {
        this.endpoint = endpoint;
        this.ringSize = endpoint.intSize(EndpointOption.RING_SIZE);
        this.zeroCopyThreshold = endpoint.intSize(EndpointOption.ZERO_COPY_THRESHOLD);
        this.zeroCopyRequested = endpoint.isSet(EndpointOption.ZERO_COPY_THRESHOLD);
        this.readTimeoutNanos = endpoint.duration(EndpointOption.READ_TIMEOUT).toNanos();
        this.handshakeTimeoutNanos = endpoint.duration(EndpointOption.HANDSHAKE_TIMEOUT).toNanos();
        this.livenessNanos = endpoint.duration(EndpointOption.LIVENESS).toNanos();
        this.budget = new Budget(endpoint.size(EndpointOption.MAX_REGISTERED));
        if (2L * ringSize > budget.limit()) {
            throw new IllegalArgumentException("bad endpoint '" + endpoint + "': ringSize "
                    + Units.formatSize(ringSize) + " needs " + Units.formatSize(2L * ringSize)
                    + " of registered memory (ring and staging), more than maxRegistered "
                    + Units.formatSize(budget.limit()));
        }
        this.waiter = new Waiter(endpoint.duration(EndpointOption.BUSY_POLL).toNanos(), this, () -> closed,
                () -> "with " + peerName() + " on " + endpoint);
    }

    void attach(RdmaChannel ch, RdmaNode n) {
        node = n;
        cache = new RegistrationCache(ch, budget);
        channel = ch;
    }

    RdmaChannel channel() {
        return channel;
    }

    RegistrationCache cache() {
        return cache;
    }

    String peerName() {
        RdmaChannel ch = channel;
        return ch == null ? "unconnected" : ch.peerName();
    }

    /** The read timeout as the message of a waiter: {@code "read (readTimeout 300ms)"}. */
    String readTimeoutWhat(String what) {
        return what + " (readTimeout " + Units.formatDuration(Duration.ofNanos(readTimeoutNanos)) + ")";
    }

    /**
     * Waits until {@code ready} holds, at most readTimeout (none: until it does or the connection fails), for an
     * operation whose fate only the transport or the peer can tell (a one-sided write's completion, a put's or get's
     * answer). A timeout fails the connection: the operation may still be under way (the transport may hold it, a
     * stalled peer may act on it once it runs again), so the connection cannot be trusted with more.
     *
     * @param what the operation, with its timeout ({@link #readTimeoutWhat}), for the timeout's message
     */
    void awaitOrFail(BooleanSupplier ready, String what) throws IOException {
        try {
            waiter.awaitFor(ready, Waiter.UNTIMED, readTimeoutNanos, what);
        } catch (SocketTimeoutException e) {
            fail(e);
            throw e;
        }
    }

    // ---- state -------------------------------------------------------------------------------------------------

    IOException failure() {
        return failure;
    }

    /** Records the first failure and wakes everyone waiting: the connection cannot be used any more. */
    void fail(IOException cause) {
        if (failure == null) {
            failure = cause;
        }
        wake();
    }

    boolean isEstablished() {
        return established;
    }

    void established() {
        established = true;
    }

    boolean isClosed() {
        return closed;
    }

    /**
     * Marks the connection closed and wakes whoever waits on it, including a thread sleeping in the node's wait on it
     * (an event loop's blockingPoll counts as a read, which the close waits for: woken, it sees the close at once
     * instead of when its wait times out).
     */
    void markClosed() {
        closed = true;
        wake();
        wakeWaiter();
    }

    /** Whether the peer closed its side, and the stream of its bytes ends at {@link #peerFinalPosition()}. */
    boolean peerClosed() {
        return peerFinalPosition >= 0;
    }

    long peerFinalPosition() {
        return peerFinalPosition;
    }

    void peerClosedAt(long finalPosition) {
        peerFinalPosition = finalPosition;
    }

    /** Throws if the connection was closed or failed. */
    void checkUsable() throws IOException {
        if (closed) {
            throw new ClosedChannelException();
        }
        if (failure != null) {
            throw failed("connection to " + peerName());
        }
    }

    /**
     * The exception for {@code what} (e.g. {@code "read from 10.0.0.2:5000"}) failing with the connection: a
     * {@link SocketTimeoutException} when the peer went silent (liveness), else a {@link CommunicatorException}.
     */
    IOException failed(String what) {
        String message = what + " failed: " + failure.getMessage();
        if (failure instanceof SocketTimeoutException) {
            SocketTimeoutException e = new SocketTimeoutException(message);
            e.initCause(failure);
            return e;
        }
        return new CommunicatorException(message, failure);
    }

    // ---- events --------------------------------------------------------------------------------------------------

    /** Makes {@code w} run on this connection's events too, or nothing if null. Must not block. */
    void watch(Runnable w) {
        watcher = w;
    }

    /** Makes {@code r} run on every event of this connection (the receiver's readiness check). Must not block. */
    void onEvents(Runnable r) {
        eventHook = r;
    }

    /** Makes {@code r} run when a busy-polling wait is about to park (the receiver's shared-ring polling ends). */
    void onPollingEnded(Runnable r) {
        pollingEndedHook = r;
    }

    /** Wakes everyone waiting: call after publishing anything a waiting condition reads. */
    void wake() {
        waiter.wake();
        Runnable w = watcher;
        if (w != null) {
            w.run();
        }
        Runnable h = eventHook;
        if (h != null) {
            h.run();
        }
    }

    /** Sends a control message; its failure fails the connection. */
    void send(ByteBuffer message) {
        controlSent++; // racy between threads: a lost count only costs a heartbeat
        channel.send(message, failOnError);
    }

    /** Counts control messages sent, for the liveness thread. */
    long controlSent() {
        return controlSent;
    }

    /**
     * While a reader spins on a shared ring's published end, the node's progress is polled only every this many
     * spins: the ring's bytes need none, and a progress call costs more than a look at the ring.
     */
    static final int RING_POLL_EVERY = Integer.getInteger("io.rdmacomm.rdma.ringPollEvery", 16);
    /** Set while a reader spins on this connection's shared ring; see {@link #RING_POLL_EVERY}. */
    volatile boolean ringSpinning;
    /** Spins since the last progress call while {@link #ringSpinning}; racy between threads, which costs nothing. */
    private int ringSpins;

    @Override
    public boolean poll() {
        if (ringSpinning && ++ringSpins < RING_POLL_EVERY) {
            return false;
        }
        ringSpins = 0;
        return node.poll();
    }

    /** Whether the node can {@link RdmaNode#waitAndPoll wait} on a caller's thread. */
    boolean canWait() {
        RdmaNode n = node;
        return n != null && n.canWait();
    }

    /** As {@link RdmaNode#waitAndPoll}. */
    boolean waitAndPoll(long nanos, java.util.function.BooleanSupplier until) {
        return node.waitAndPoll(nanos, until);
    }

    /** As {@link RdmaNode#wakeWaiter()}. */
    void wakeWaiter() {
        RdmaNode n = node;
        if (n != null) {
            n.wakeWaiter();
        }
    }

    @Override
    public void pollingEnded() {
        Runnable r = pollingEndedHook;
        if (r != null) {
            r.run();
        }
        node.pollingEnded();
    }
}
