package io.rdmacomm.rdma.spi;

import java.io.IOException;
import java.net.InetAddress;
import java.util.List;
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
     * This provider's rank among those of its {@link #wireFamily() wire family}, from 0 to 10 (5 by default): the
     * endpoint option {@code provider} naming a family ({@code ucx}, the default) runs on the {@link #isAvailable()
     * available} provider of that family with the highest priority, as gRPC's {@code ManagedChannelProvider}s are
     * chosen. A provider named by the option runs whatever its priority.
     */
    default int priority() {
        return 5;
    }

    /** Whether this provider can run here; by default when it gives no {@link #unavailabilityCause()}. */
    default boolean isAvailable() {
        return unavailabilityCause().isEmpty();
    }

    /**
     * What to tell the user once per process, as a warning, when the endpoint option {@code provider} named this
     * provider's family and it runs on this provider: {@code outranked} are the providers of the family on the class
     * path that rank higher and are not available here (the notice may also name higher ones it knows of that are not
     * on the class path). Empty (say nothing) by default.
     */
    default Optional<String> familyChoiceNotice(List<RdmaProvider> outranked) {
        return Optional.empty();
    }

    /**
     * Why a provider named {@code name}, which this provider knows of and which is not on the class path, is missing
     * and how to get it (its module, the JDK it needs); empty by default, and for names this provider does not know.
     */
    default Optional<String> absenceCause(String name) {
        return Optional.empty();
    }

    /**
     * The wire format this provider speaks: providers of one family connect to each other whatever their names
     * (the two UCX providers are both of family {@code ucx}); by default the provider's name. The endpoint option
     * {@code provider} may name a family instead of a provider (see {@link #priority()}).
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

    /**
     * The most file descriptors the server holds per peer process, shared by all connections from it (UCX: its
     * sockets to that process's worker on UCX's tcp transport); a node that {@linkplain RdmaNode#peers() counts its
     * peers} refuses a connection from one process past {@code maxPeers}. 0 by default.
     */
    default int descriptorsPerPeer() {
        return 0;
    }

    /** The most file descriptors the provider holds however many connections there are (a bounded pool). */
    default int descriptorsShared() {
        return 0;
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
