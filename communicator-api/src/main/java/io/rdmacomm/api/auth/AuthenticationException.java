package io.rdmacomm.api.auth;

import io.rdmacomm.api.CommunicatorException;

/** A peer did not prove that it knows the shared secret, or refused our proof, or takes part without a secret. */
public final class AuthenticationException extends CommunicatorException {
    private static final long serialVersionUID = 1L;

    public AuthenticationException(String message) {
        super(message);
    }
}
