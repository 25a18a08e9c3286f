package io.rdmacomm.rdma.spi;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Optional;

/**
 * An RDMA implementation the engine can run on ({@code ucx}, {@code verbs}), registered in
 * {@code META-INF/services/io.rdmacomm.rdma.spi.RdmaProvider}. Every channel and listener it returns owns its
 * native resources; closing them releases those resources and any thread started for them.
 */
public interface RdmaProvider {

    /** The name selected by the endpoint option {@code provider}. */
    String name();

    /** Why this provider cannot run here (missing native library, no device), with the fix; empty if it can. */
    Optional<String> unavailabilityCause();

    /**
     * Connects to a listener of the same provider. Returns once the connection is established (the handler may
     * receive messages from then on), or fails.
     *
     * @throws java.net.ConnectException if the peer refuses or cannot be reached
     * @throws java.net.SocketTimeoutException if {@code timeout} expires
     */
    RdmaChannel connect(InetSocketAddress peer, Duration timeout, ChannelHandler handler) throws IOException;

    /** Listens for connections; {@code port 0} picks a free port, which {@link RdmaListener#address()} reports. */
    RdmaListener listen(InetSocketAddress address, ListenerHandler handler) throws IOException;
}
