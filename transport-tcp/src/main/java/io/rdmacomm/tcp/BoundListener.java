package io.rdmacomm.tcp;

import io.rdmacomm.api.Endpoint;
import io.rdmacomm.api.EndpointOption;
import java.io.IOException;
import java.io.InputStream;
import java.net.BindException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.UnresolvedAddressException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A listening socket as both servers start from: bound with {@code SO_REUSEADDR} and the endpoint's {@code backlog}
 * (at most net.core.somaxconn, which the kernel would cap it at anyway), non-blocking, registered for accepts on a
 * selector of its own.
 *
 * @param endpoint the requested endpoint with the port actually bound
 */
record BoundListener(Endpoint endpoint, ServerSocketChannel listener, Selector selector) {

    private static final Path SOMAXCONN = Path.of("/proc/sys/net/core/somaxconn");

    /** Binds; a failure is a {@link BindException} naming the endpoint, with nothing left open. */
    static BoundListener bind(Endpoint requested) throws IOException {
        int backlog = backlog(requested, somaxconn());
        InetSocketAddress address = requested.socketAddress();
        if (address.isUnresolved()) {
            throw new BindException("cannot listen on " + requested + ": unknown host '" + requested.host() + "'");
        }
        ServerSocketChannel listener = ServerSocketChannel.open();
        Selector selector = null;
        try {
            listener.setOption(StandardSocketOptions.SO_REUSEADDR, true);
            listener.bind(address, backlog);
            listener.configureBlocking(false);
            selector = Selector.open();
            listener.register(selector, SelectionKey.OP_ACCEPT);
            int port = ((InetSocketAddress) listener.getLocalAddress()).getPort();
            return new BoundListener(requested.withPort(port), listener, selector);
        } catch (IOException | UnresolvedAddressException e) {
            listener.close();
            if (selector != null) {
                selector.close();
            }
            BindException be = new BindException("cannot listen on " + requested + ": " + e.getMessage());
            be.initCause(e);
            throw be;
        }
    }

    /**
     * The listen queue to ask for: the endpoint's {@code backlog}, at most {@code somaxconn} when that is known
     * (positive).
     *
     * @throws IllegalArgumentException if {@code backlog} is 0
     */
    static int backlog(Endpoint e, int somaxconn) {
        int backlog = e.intSize(EndpointOption.BACKLOG);
        if (backlog < 1) {
            throw new IllegalArgumentException("option 'backlog' = " + backlog + " on " + e
                    + ": the listen queue must hold at least 1 peer");
        }
        return somaxconn > 0 ? Math.min(backlog, somaxconn) : backlog;
    }

    /** net.core.somaxconn, or -1 where it cannot be read. */
    static int somaxconn() {
        // one read: a sysctl file reads as empty past offset 0, so a reader that starts with one byte gets "4"
        try (InputStream in = Files.newInputStream(SOMAXCONN)) {
            byte[] b = new byte[32];
            int n = in.read(b);
            return n <= 0 ? -1 : Integer.parseInt(new String(b, 0, n, StandardCharsets.US_ASCII).trim());
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }
}
