package io.rdmacomm.rdma.spi;

import java.io.IOException;

/**
 * What one process runs of a provider on one interface, shared by all its connections, server and client side
 * (UCX: context, worker and one progress thread; verbs: a device context and the rdma-cm listener). Messages for
 * the node's channels are routed by {@link RdmaChannel#localId()}.
 */
public interface RdmaNode extends AutoCloseable {

    /**
     * What a peer needs to reach this node (UCX: the worker address; verbs: the rdma-cm address), sent to it by the
     * engine's bootstrap handshake. At most 4 KiB.
     */
    byte[] address();

    /**
     * A new, unconnected channel with a fresh {@link RdmaChannel#localId()}; {@code handler} may receive messages
     * for it from now on (a peer may send as soon as it connected its side). {@code peerName} names the peer in
     * messages.
     */
    RdmaChannel newChannel(String peerName, ChannelHandler handler) throws IOException;

    /**
     * Progresses the node once on the calling thread (for busy-polling waits); returns whether anything happened.
     * Nodes may return false without doing anything.
     */
    boolean poll();

    /** Whether {@link #waitAndPoll} can wait on this node (false by default). */
    default boolean canWait() {
        return false;
    }

    /**
     * Waits on the calling thread up to {@code nanos} for the node's events and progresses them here, until
     * {@code until} holds or {@link #wakeWaiter()} is called; the node's progress thread stays aside meanwhile. One
     * thread at a time: another caller gets false at once, as every caller does where {@link #canWait()} is false.
     * Returns {@code until}'s last value.
     */
    default boolean waitAndPoll(long nanos, java.util.function.BooleanSupplier until) {
        return false;
    }

    /** Ends a {@link #waitAndPoll} early; any thread. */
    default void wakeWaiter() {
    }

    /** The caller stopped busy-polling and is about to wait: a progress thread that stepped aside resumes now. */
    default void pollingEnded() {
    }

    /**
     * The peer processes (their nodes) this node holds transport connections to, which all channels to that peer
     * share; -1 where the provider does not count them (then {@code maxPeers} does not apply).
     */
    default int peers() {
        return -1;
    }

    /** Whether a channel to the node at {@code peerAddress} would share a transport connection this node holds. */
    default boolean reaches(byte[] peerAddress) {
        return false;
    }

    /** Drops the caller's reference; the last one releases the node (its channels must be closed by then). */
    @Override
    void close();
}
