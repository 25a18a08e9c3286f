package io.rdmacomm.rdma;

import io.rdmacomm.api.CommunicatorException;
import io.rdmacomm.api.Endpoint;
import io.rdmacomm.api.EndpointOption;
import io.rdmacomm.api.Units;
import io.rdmacomm.api.support.Waiter;
import io.rdmacomm.rdma.spi.Completion;
import io.rdmacomm.rdma.spi.RdmaChannel;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.time.Duration;
import java.util.concurrent.locks.LockSupport;

/**
 * What the parts of one connection share: its settings, the provider channel, the connection's state (failed,
 * closed, peer's end of stream), the waiter every blocking call of the connection waits with, the zero-copy
 * registration cache, and sending control messages.
 */
final class Link implements Waiter.Poller {
    final Endpoint endpoint;
    final int ringSize;
    final int zeroCopyThreshold;
    /** Whether zeroCopyThreshold was set: reads then advertise whatever the provider says. */
    final boolean zeroCopyRequested;
    /** The read timeout in nanoseconds; 0 waits without limit. */
    final long readTimeoutNanos;
    final long handshakeTimeoutNanos;
    final Budget budget;
    final Waiter waiter;

    private volatile RdmaChannel channel;
    private RegistrationCache cache;
    private volatile IOException failure;
    private volatile boolean established;
    private volatile boolean closed;
    /** The peer's final stream position once its CLOSE arrived, else -1. */
    private volatile long peerFinalPosition = -1;
    /** A thread outside the connection's calls that its events wake too (the server's handshake thread). */
    private volatile Thread watcher;
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

    Link(Endpoint endpoint) {
        this.endpoint = endpoint;
        this.ringSize = endpoint.intSize(EndpointOption.RING_SIZE);
        this.zeroCopyThreshold = endpoint.intSize(EndpointOption.ZERO_COPY_THRESHOLD);
        this.zeroCopyRequested = endpoint.isSet(EndpointOption.ZERO_COPY_THRESHOLD);
        this.readTimeoutNanos = endpoint.duration(EndpointOption.READ_TIMEOUT).toNanos();
        this.handshakeTimeoutNanos = endpoint.duration(EndpointOption.HANDSHAKE_TIMEOUT).toNanos();
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

    void attach(RdmaChannel ch) {
        channel = ch;
        cache = new RegistrationCache(ch, budget);
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

    void markClosed() {
        closed = true;
        wake();
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

    /** The exception for {@code what} (e.g. {@code "read from 10.0.0.2:5000"}) failing with the connection. */
    CommunicatorException failed(String what) {
        return new CommunicatorException(what + " failed: " + failure.getMessage(), failure);
    }

    // ---- events --------------------------------------------------------------------------------------------------

    /** Makes {@code t} woken by this connection's events too, or none if null. */
    void watch(Thread t) {
        watcher = t;
    }

    /** Wakes everyone waiting: call after publishing anything a waiting condition reads. */
    void wake() {
        waiter.wake();
        Thread t = watcher;
        if (t != null) {
            LockSupport.unpark(t);
        }
    }

    /** Sends a control message; its failure fails the connection. */
    void send(ByteBuffer message) {
        channel.send(message, failOnError);
    }

    @Override
    public boolean poll() {
        return channel.poll();
    }

    @Override
    public void pollingEnded() {
        channel.pollingEnded();
    }
}
