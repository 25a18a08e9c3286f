package io.rdmacomm.netty;

import io.rdmacomm.api.Endpoint;

import java.net.SocketAddress;
import java.util.Objects;

/**
 * A {@link SocketAddress} that carries a communicator endpoint URI ({@code rdma://10.0.0.2:7000},
 * {@code tcp://127.0.0.1:0?readTimeout=30s}, {@code local://name}): what {@link CommunicatorSocketChannel} connects
 * to and {@link CommunicatorServerSocketChannel} binds, with the transport the URI's scheme names. A plain
 * {@link java.net.InetSocketAddress} works as well; the scheme then comes from the channel's
 * {@link CommunicatorChannelOption#SCHEME} option or the event loop group's default.
 */
public final class CommunicatorAddress extends SocketAddress {

    private static final long serialVersionUID = 1L;

    private final String uri;

    /**
     * @param uri an endpoint URI as {@link Endpoint#parse} takes it
     * @throws IllegalArgumentException if the URI does not parse
     */
    public CommunicatorAddress(String uri) {
        this.uri = Endpoint.parse(Objects.requireNonNull(uri, "uri")).toString();
    }

    /** The endpoint URI. */
    public String uri() {
        return uri;
    }

    /** The URI parsed. */
    public Endpoint endpoint() {
        return Endpoint.parse(uri);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof CommunicatorAddress && ((CommunicatorAddress) o).uri.equals(uri);
    }

    @Override
    public int hashCode() {
        return uri.hashCode();
    }

    @Override
    public String toString() {
        return uri;
    }
}
