package io.rdmacomm.api;

/**
 * A one-sided operation was refused: out of the region's bounds, unknown or deregistered key, or missing
 * access right. Only that operation failed; the connection and both memories are intact.
 */
public final class RemoteAccessException extends CommunicatorException {
    private static final long serialVersionUID = 1L;

    public RemoteAccessException(String message) {
        super(message);
    }
}
