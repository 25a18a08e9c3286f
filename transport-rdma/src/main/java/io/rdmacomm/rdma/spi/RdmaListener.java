package io.rdmacomm.rdma.spi;

import java.net.InetSocketAddress;

/** A listening provider endpoint. Closing it stops new connections; channels already accepted stay open. */
public interface RdmaListener extends AutoCloseable {

    /** The bound address (with the port actually chosen). */
    InetSocketAddress address();

    @Override
    void close();
}
