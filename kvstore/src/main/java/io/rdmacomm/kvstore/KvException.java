package io.rdmacomm.kvstore;

import java.io.IOException;

/**
 * A refused kv operation, typed by its {@link Code}. The connection stays usable after every code but
 * {@link Code#NO_SESSION}; transport failures are plain {@link IOException}s instead.
 */
public final class KvException extends IOException {
    private static final long serialVersionUID = 1L;

    /** Why an operation was refused; the number is its code on the data plane's wire. */
    public enum Code {
        /** The key is not stored. */
        NOT_FOUND(1),
        /** The server's memory pool has no free block large enough for the value. */
        POOL_FULL(2),
        /** The value is larger than the server's {@code --max-value}. */
        VALUE_TOO_LARGE(3),
        /** The key is empty or longer than the server's {@code --max-key}. */
        BAD_KEY(4),
        /** The value does not fit the client's registered buffer ({@code --buffer}). */
        BUFFER_TOO_SMALL(5),
        /** A request the server could not accept (malformed, or naming bytes outside the client's buffer). */
        BAD_REQUEST(6),
        /** The session is unknown, closed, or its token does not match. */
        NO_SESSION(7),
        /** The one-sided transfer of the value was refused by the transport. */
        TRANSFER_FAILED(8),
        /** The server serves its maximum number of sessions. */
        BUSY(9);

        private final int wire;

        Code(int wire) {
            this.wire = wire;
        }

        /** The code's byte on the data plane's wire. */
        int wire() {
            return wire;
        }

        /** The code with this wire byte, or null. */
        static Code ofWire(int wire) {
            for (Code c : values()) {
                if (c.wire == wire) {
                    return c;
                }
            }
            return null;
        }
    }

    private final Code code;

    public KvException(Code code, String message) {
        super(message);
        this.code = code;
    }

    public Code code() {
        return code;
    }
}
