package io.rdmacomm.session;

import io.rdmacomm.api.CommunicatorException;

/**
 * A session request that was refused: by the server while validating it, or reported to the client by the
 * server's reply. Carries the {@link SessionStatus} sent on the wire.
 */
public final class SessionException extends CommunicatorException {
    private static final long serialVersionUID = 1L;

    private final SessionStatus status;

    public SessionException(SessionStatus status, String message) {
        super(message);
        this.status = status;
    }

    public SessionStatus status() {
        return status;
    }
}
