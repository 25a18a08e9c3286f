package io.rdmacomm.api;

/** The peer did not complete this protocol's handshake: wrong magic number, wrong version, or garbage. */
public final class HandshakeException extends CommunicatorException {
    private static final long serialVersionUID = 1L;

    public HandshakeException(String message) {
        super(message);
    }

    public HandshakeException(String message, Throwable cause) {
        super(message, cause);
    }
}
