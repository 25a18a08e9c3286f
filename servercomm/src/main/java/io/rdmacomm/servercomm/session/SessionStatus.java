package io.rdmacomm.servercomm.session;

import java.util.Optional;

/** The status a server answers a session request with; every value but {@link #OK} ends the session. */
public enum SessionStatus {
    OK(0),
    /** The request did not start with {@link SessionProtocol#REQUEST_MAGIC}: the client speaks something else. */
    BAD_MAGIC(1),
    /** The client speaks a protocol version this server does not. */
    BAD_VERSION(2),
    /** The exchange id is not one this server knows (or serves). */
    UNKNOWN_EXCHANGE(3),
    /** The parameters have the wrong length or an invalid value. */
    BAD_PARAMETERS(4),
    /** The announced parameter length exceeds {@link SessionProtocol#MAX_PARAMS_LENGTH}. */
    REQUEST_TOO_LARGE(5),
    /** The stream ended, or the request timeout expired, before the whole request arrived. */
    TRUNCATED(6),
    /** The server is at its session limit; try again later. */
    BUSY(7);

    private final int code;

    SessionStatus(int code) {
        this.code = code;
    }

    /** The code on the wire. */
    public int code() {
        return code;
    }

    /** The status with this wire code, if this version knows it. */
    public static Optional<SessionStatus> byCode(int code) {
        for (SessionStatus s : values()) {
            if (s.code == code) {
                return Optional.of(s);
            }
        }
        return Optional.empty();
    }
}
