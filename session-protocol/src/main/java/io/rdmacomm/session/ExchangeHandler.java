package io.rdmacomm.session;

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

    /**
     * Checks a request against what this server offers (a routine it has, a group size it allows) before the
     * session is accepted; the dispatcher refuses the session with the exception's status and message.
     */
    default void validate(SessionRequest request) throws SessionException {
    }
}
