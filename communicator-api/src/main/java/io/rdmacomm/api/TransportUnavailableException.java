package io.rdmacomm.api;

/**
 * The transport for an endpoint cannot run on this machine (missing native library, no device). The message
 * says exactly what is missing and how to fix it.
 */
public final class TransportUnavailableException extends CommunicatorException {
    private static final long serialVersionUID = 1L;

    public TransportUnavailableException(String message) {
        super(message);
    }

    public TransportUnavailableException(String message, Throwable cause) {
        super(message, cause);
    }
}
