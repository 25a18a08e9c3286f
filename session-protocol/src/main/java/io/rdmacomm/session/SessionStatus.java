package io.rdmacomm.session;

import java.util.Optional;

/**
 * The status a server answers a session request (in a {@link SessionReply}) or ends an exchange (in an
 * {@link ExchangeResult}) with; every value but {@link #OK} ends the session.
 */
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
    /** The announced parameter length, or a length a parameter announces, exceeds the server's limit. */
    REQUEST_TOO_LARGE(5),
    /** The stream ended, or the request timeout expired, before the whole request or frame arrived. */
    TRUNCATED(6),
    /** The server is at its session limit; try again later. */
    BUSY(7),
    /** A {@link Exchange#CALL} names a routine the server does not have; the message lists those it has. */
    UNKNOWN_ROUTINE(8),
    /** A routine's output does not fit the region the client registered for it. */
    OUTPUT_TOO_LARGE(9),
    /** A frame inside an exchange is malformed or announces more bytes than allowed. */
    BAD_FRAME(10),
    /** A group member announced a different group shape (exchange, member count, size) than the group has. */
    GROUP_MISMATCH(11),
    /** The group did not get its announced number of members within the server's group timeout. */
    GROUP_TIMEOUT(12),
    /** The announced member count exceeds the server's maximum group size. */
    GROUP_TOO_LARGE(13),
    /** The server failed while running the exchange (registration refused, a collective failed). */
    FAILED(14);

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
