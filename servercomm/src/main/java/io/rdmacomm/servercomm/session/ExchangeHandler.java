package io.rdmacomm.servercomm.session;

import io.rdmacomm.api.Communicator;
import java.io.IOException;

/** The server side of one {@link Exchange}, run by the {@link SessionDispatcher} after it accepted a request. */
@FunctionalInterface
public interface ExchangeHandler {

    /**
     * Runs the exchange on {@code peer} until it is complete or the client ends the stream. The dispatcher closes
     * the peer afterwards.
     */
    void run(Communicator peer, SessionRequest request) throws IOException;
}
