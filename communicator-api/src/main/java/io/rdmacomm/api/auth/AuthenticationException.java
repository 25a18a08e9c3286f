package io.rdmacomm.api.auth;

import io.rdmacomm.api.CommunicatorException;

/**
 * A peer did not prove that it knows the shared secret, or refused our proof, or takes part without a secret. The
 * factories word the mismatches (one side has a secret, the other none) alike for every transport's handshake.
 */
public final class AuthenticationException extends CommunicatorException {
    private static final long serialVersionUID = 1L;

    public AuthenticationException(String message) {
        super(message);
    }

    /** Client side: the server {@code where} demands a secret and we have none. */
    public static AuthenticationException requiredBy(String where) {
        return new AuthenticationException(where + " requires authentication: give this endpoint the server's"
                + " shared secret (secretFile= or secretEnv=)");
    }

    /** Client side: we have a secret and the server {@code where} has none. */
    public static AuthenticationException noSecretAt(String where) {
        return new AuthenticationException(where + " has no shared secret, so it cannot prove who it is;"
                + " not connecting (give the server the secret too, or drop secretFile/secretEnv here)");
    }

    /** Server side: the peer offered no authentication and this server has a secret. */
    public static AuthenticationException notOfferedBy(String peer) {
        return new AuthenticationException("peer " + peer + " offered no authentication; this server"
                + " requires its shared secret");
    }

    /** Server side: the peer offered authentication and this server has no secret. */
    public static AuthenticationException offeredWithoutSecret(String peer) {
        return new AuthenticationException("peer " + peer + " offered authentication, but this server has"
                + " no shared secret (secretFile/secretEnv)");
    }
}
