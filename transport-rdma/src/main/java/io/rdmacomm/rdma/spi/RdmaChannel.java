package io.rdmacomm.rdma.spi;

import io.rdmacomm.api.Access;
import io.rdmacomm.api.RegionDescriptor;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Set;

/**
 * One reliable provider channel of an {@link RdmaNode} (verbs: an RC queue pair; UCX: an endpoint), created
 * unconnected by {@link RdmaNode#newChannel} and connected once by {@link #connect}. Operations are asynchronous and
 * report through a {@link Completion}; all methods are thread-safe. Operations issued before {@link #connect},
 * after the channel failed or after it closed complete with a failure.
 */
public interface RdmaChannel extends AutoCloseable {

    /** Which side of the bootstrap a channel is on; providers whose connections have a direction use it. */
    enum Role {
        /** The client: verbs initiates rdma-cm from this side. */
        ACTIVE,
        /** The server: verbs waits for the active side's rdma-cm connection. */
        PASSIVE
    }

    /**
     * The id that routes the peer's messages to this channel on its node; the engine sends it to the peer in the
     * bootstrap handshake.
     */
    int localId();

    /**
     * Connects to the peer's channel {@code peerChannelId} on the node at {@code peerAddress} (the peer's
     * {@link RdmaNode#address()}, as the bootstrap carried it: validate before use). The PASSIVE side connects
     * after it answered the bootstrap and must not wait for the ACTIVE side (it may return before the connection
     * is established; the first message from the peer proves it). The ACTIVE side returns once it may send.
     *
     * @throws java.net.SocketTimeoutException if {@code deadline} ({@link System#nanoTime()}) passes first
     * @throws java.io.IOException if the address is unusable or the peer cannot be reached
     */
    void connect(byte[] peerAddress, int peerChannelId, Role role, long deadline) throws IOException;

    /**
     * Whether the transport itself confines a peer's one-sided access to the registered bounds of a region (an
     * RDMA NIC checking remote keys: verbs, UCX rc/dc/ud on a device). False where a remote key gives the peer more
     * (UCX shared memory and tcp). Known once {@link #connect} returned.
     */
    boolean boundsEnforcedByTransport();

    /** The peer, for messages ({@code "127.0.0.1:53122"}). */
    String peerName();

    /**
     * Registers the memory of a direct buffer, from index 0 to its capacity, for local use and for the given remote
     * rights (an empty set: local use only, e.g. as the source of writes). The region's address is that of index 0.
     */
    LocalRegion register(ByteBuffer buffer, Set<Access> access) throws IOException;

    /**
     * Allocates {@code length} bytes of registered memory for buffers the peer writes into (receive rings).
     * Providers override this where memory they allocate is cheaper to reach: UCX maps it into shared memory, so
     * a peer on the same host puts into it with a plain copy, where a put into mapped application memory needs
     * the target's progress before its flush completes.
     */
    default RegisteredBuffer allocate(int length, Set<Access> access) throws IOException {
        ByteBuffer buffer = ByteBuffer.allocateDirect(length);
        return new RegisteredBuffer(buffer, register(buffer, access));
    }

    /**
     * Whether {@link #write}s into application memory the peer registered with {@link #register} are placed by the
     * transport alone (RDMA devices), so that advertising large read buffers for zero-copy pays. False where the
     * provider emulates them through the target's progress (UCX 1.13 on shared memory or TCP), which measured
     * slower than copying through the UCX-allocated ring. The engine then advertises only when the endpoint sets
     * zeroCopyThreshold explicitly.
     */
    default boolean placesWritesDirectly() {
        return true;
    }

    /**
     * Whether {@link #write} moves data one-sidedly from the source (RDMA write, UCX put). False where the provider
     * carries the data in a message that the target copies into place (UCX with only tcp): the engine then stages
     * even large direct writes, which measured faster there.
     */
    default boolean writesAreOneSided() {
        return true;
    }

    /**
     * The peer's region mapped into this process for plain stores, or null where the provider cannot map it (the
     * default): a receive ring in shared memory on the same host. The engine then copies a write's bytes into it
     * itself and notifies them through the ring's control words or with a message ({@link #send}); the buffers'
     * bounds are the region's, and they are valid until {@code region} is closed (a copy racing that close fails with
     * {@link IllegalStateException}).
     */
    default MappedRing mapRemote(RemoteRegion region) {
        return null;
    }

    /** Unpacks a descriptor the peer packed with {@link LocalRegion#descriptor()}. */
    RemoteRegion unpack(RegionDescriptor descriptor) throws IOException;

    /** The largest control message {@link #send} and {@link #write} notifications accept. */
    int maxMessageSize();

    /**
     * Sends a two-sided control message; the peer's handler receives it in order with this channel's other
     * messages and notifications. {@code message}'s remaining bytes are copied before the call returns.
     */
    void send(ByteBuffer message, Completion done);

    /**
     * Writes {@code length} bytes at {@code srcAddress} (inside {@code src}) into the peer's memory at
     * {@code dstAddress} (inside {@code dst}); if {@code notification} is not null, the peer's handler then
     * receives it, never before the data is placed. {@code done} reports remote completion: the data is in the
     * peer's memory. {@code notification} is copied before the call returns.
     */
    void write(LocalRegion src, long srcAddress, RemoteRegion dst, long dstAddress, int length,
            ByteBuffer notification, Completion done);

    /** Reads {@code length} bytes of the peer's memory at {@code srcAddress} into {@code dstAddress}. */
    void read(RemoteRegion src, long srcAddress, LocalRegion dst, long dstAddress, int length, Completion done);

    /**
     * Closes the channel: pending operations fail, the peer sees the connection end, and every resource the
     * channel holds (unpacked keys, registrations made through it, its id on the node) is released. Waits at most for a
     * short, bounded flush. Idempotent.
     */
    @Override
    void close();
}
