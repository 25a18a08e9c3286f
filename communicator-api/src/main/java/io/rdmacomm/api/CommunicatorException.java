package io.rdmacomm.api;

import java.io.IOException;
import java.util.OptionalInt;

/**
 * A protocol violation or transport failure: a peer that does not speak this protocol, a malformed frame, a
 * failed native operation. Carries the native status code where the transport has one.
 */
public class CommunicatorException extends IOException {
    private static final long serialVersionUID = 1L;

    private final Integer nativeStatus;

    public CommunicatorException(String message) {
        this(message, null, null);
    }

    public CommunicatorException(String message, Throwable cause) {
        this(message, null, cause);
    }

    public CommunicatorException(String message, Integer nativeStatus, Throwable cause) {
        super(message, cause);
        this.nativeStatus = nativeStatus;
    }

    /** The transport's native status code for this failure (e.g. a UCX {@code ucs_status_t}), if any. */
    public OptionalInt nativeStatus() {
        return nativeStatus == null ? OptionalInt.empty() : OptionalInt.of(nativeStatus);
    }
}
