package io.rdmacomm.tcp;

import io.rdmacomm.api.Endpoint;
import java.io.IOException;
import java.net.BindException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.UnresolvedAddressException;

/**
 * A listening socket as both servers start from: bound with {@code SO_REUSEADDR} and a backlog of
 * {@link TcpServer#BACKLOG}, non-blocking, registered for accepts on a selector of its own.
 *
 * @param endpoint the requested endpoint with the port actually bound
 */
record BoundListener(Endpoint endpoint, ServerSocketChannel listener, Selector selector) {

    /** Binds; a failure is a {@link BindException} naming the endpoint, with nothing left open. */
    static BoundListener bind(Endpoint requested) throws IOException {
        InetSocketAddress address = requested.socketAddress();
        if (address.isUnresolved()) {
            throw new BindException("cannot listen on " + requested + ": unknown host '" + requested.host() + "'");
        }
        ServerSocketChannel listener = ServerSocketChannel.open();
        Selector selector = null;
        try {
            listener.setOption(StandardSocketOptions.SO_REUSEADDR, true);
            listener.bind(address, TcpServer.BACKLOG);
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
}
