package io.rdmacomm.api;

import java.util.Optional;

/**
 * A transport, found by {@link java.util.ServiceLoader}: one provider per URI scheme. Register an
 * implementation in {@code META-INF/services/io.rdmacomm.api.CommunicatorProvider}.
 */
public interface CommunicatorProvider {

    /** The URI scheme this provider serves ({@code "tcp"}, {@code "rdma"}, {@code "local"}). */
    String scheme();

    /**
     * Why this transport cannot run here for {@code endpoint} (a missing native library, no device), with the
     * fix, or empty if it can. Cheap and side-effect free after the first call.
     */
    Optional<String> unavailabilityCause(Endpoint endpoint);

    /** Whether this transport can run here for {@code endpoint}. */
    default boolean isAvailable(Endpoint endpoint) {
        return unavailabilityCause(endpoint).isEmpty();
    }

    /**
     * Creates an unconnected communicator for {@code endpoint} (whose scheme is this provider's). Only called
     * when {@link #isAvailable} holds.
     */
    Communicator open(Endpoint endpoint);

    /**
     * The most file descriptors one accepted connection of {@code endpoint} holds in the serving process, for
     * capacity planning: a server derives from its descriptor limit how many peers it can hold
     * ({@link io.rdmacomm.api.support.DescriptorBudget}). Transports state their own; the default is a cautious 8.
     */
    default int descriptorsPerConnection(Endpoint endpoint) {
        return 8;
    }

    /**
     * The most file descriptors the serving process holds per peer process, beyond what each connection holds: what
     * all connections from one process share (UCX's sockets to that process's worker, say). 0 by default: nothing is
     * shared per peer.
     */
    default int descriptorsPerPeerProcess(Endpoint endpoint) {
        return 0;
    }

    /**
     * The most file descriptors the serving process holds for connections of {@code endpoint} however many there
     * are, beyond {@link #descriptorsPerConnection} and {@link #descriptorsPerPeerProcess} (a bounded pool of
     * descriptors kept for peers in setup, say). 0 by default.
     */
    default int descriptorsShared(Endpoint endpoint) {
        return 0;
    }
}
