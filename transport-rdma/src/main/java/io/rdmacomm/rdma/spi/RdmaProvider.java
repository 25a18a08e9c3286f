package io.rdmacomm.rdma.spi;

import java.io.IOException;
import java.net.InetAddress;
import java.util.Optional;

/**
 * An RDMA implementation the engine can run on ({@code ucx}, {@code verbs}), registered in
 * {@code META-INF/services/io.rdmacomm.rdma.spi.RdmaProvider}. The provider never listens on the network itself:
 * the engine bootstraps every connection over its own TCP socket, exchanging {@link RdmaNode#address() node
 * addresses} and channel ids, and then lets both sides {@link RdmaChannel#connect connect} their channels.
 */
public interface RdmaProvider {

    /** The name selected by the endpoint option {@code provider}. */
    String name();

    /**
     * The wire format this provider speaks: providers of one family connect to each other whatever their names
     * (the two UCX providers are both of family {@code ucx}); by default the provider's name.
     */
    default String wireFamily() {
        return name();
    }

    /**
     * Whether a client and a server of this provider must both say the same {@code oneSided} (trusted or checked):
     * true where a node giving its peers one-sided access cannot connect to one that withholds it (UCX: libucp
     * aborts in its wireup when a context with RMA meets one without). False by default.
     */
    default boolean oneSidedModesMustMatch() {
        return false;
    }

    /**
     * The most file descriptors one accepted connection holds in the server beyond its bootstrap socket (which the
     * engine holds for the connection's life): the provider's own sockets, shared-memory files and event
     * descriptors per connection, not those of the node all connections share. By default a cautious 7.
     */
    default int descriptorsPerChannel() {
        return 7;
    }

    /** Why this provider cannot run here (missing native library, no device), with the fix; empty if it can. */
    Optional<String> unavailabilityCause();

    /**
     * The process's node of this provider on {@code localInterface} (the address the bootstrap socket uses) for
     * connections on {@code side} (ACTIVE: client, PASSIVE: server), shared by all of them and reference counted:
     * each call must be matched by one {@link RdmaNode#close()}. A provider may return the same node for both sides
     * or one per side; never one per connection. The node uses only that interface's network devices where the
     * transport allows it.
     */
    RdmaNode node(InetAddress localInterface, RdmaChannel.Role side) throws IOException;

    /**
     * {@link #node(InetAddress, RdmaChannel.Role)} for an endpoint's {@code oneSided} option: with
     * {@code trustPeers} (oneSided=trusted) the node gives its peers one-sided access (remote keys, put and get) on
     * every transport, including those that do not check remote keys against registered bounds (UCX shared memory,
     * tcp), so a peer may write and read anywhere the node's UCX context reaches. Trusting and checking nodes are
     * distinct nodes. By default the option is ignored: right for a provider whose transport always checks remote
     * keys (verbs); the UCX providers override this.
     */
    default RdmaNode node(InetAddress localInterface, RdmaChannel.Role side, boolean trustPeers) throws IOException {
        return node(localInterface, side);
    }
}
