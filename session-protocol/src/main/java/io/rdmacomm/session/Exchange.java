package io.rdmacomm.session;

import java.util.Optional;

/**
 * What a session does after the request, identified on the wire by a stable 16-bit id. Ids are never reused:
 * a new exchange gets a new constant with a new id. The parameter layouts are in {@link SessionProtocol}.
 */
public enum Exchange {
    /** The server writes back every byte it reads, synced after each read. No parameters. */
    ECHO(1, 0, 0),
    /**
     * The server reads and discards exactly the announced number of bytes, then answers with a
     * {@link SessionProtocol#SINK_ACK_MAGIC sink acknowledgement} carrying the count it received. Parameter: the
     * total byte count as an unsigned 64-bit big-endian integer below {@link Long#MAX_VALUE}.
     */
    SINK(2, 8, 8),
    /** Two-sided send: the client sends one message, the server acknowledges its length and CRC32C. */
    SEND(3, 4, 4),
    /** One-sided write into a region the server advertises, chunk by chunk, then the server's SHA-256. */
    WRITE(4, 8, 8),
    /** One-sided read from a server region filled with {@link SessionProtocol#patternByte the pattern}. */
    READ(5, 0, 0),
    /** A routine call: the server runs a named routine and puts its output into the client's region. */
    CALL(6, 1 + 1 + 4, 1 + SessionProtocol.MAX_NAME_LENGTH + 4),
    /** Sequential all-to-all in a named group of clients with the server as rank 0. */
    ALLTOALL(7, 1 + 1 + 2 + 4, 1 + SessionProtocol.MAX_NAME_LENGTH + 2 + 4),
    /** Broadcast by the server to a named group of clients. */
    BROADCAST(8, 1 + 1 + 2 + 4, 1 + SessionProtocol.MAX_NAME_LENGTH + 2 + 4),
    /**
     * The server's counters: one result whose body is a {@link ServerStats} (live sessions, registered memory), then
     * the client ends the stream. No parameters.
     */
    STATS(9, 0, 0);

    private final int id;
    private final int minParams;
    private final int maxParams;

    Exchange(int id, int minParams, int maxParams) {
        this.id = id;
        this.minParams = minParams;
        this.maxParams = maxParams;
    }

    /** The id on the wire. */
    public int id() {
        return id;
    }

    /** Whether a parameter block of {@code length} bytes can be this exchange's. */
    public boolean acceptsParamsLength(int length) {
        return length >= minParams && length <= maxParams;
    }

    /** The accepted parameter lengths for messages: {@code "8 bytes"} or {@code "6 to 69 bytes"}. */
    public String paramsLengthText() {
        return minParams == maxParams ? minParams + " bytes" : minParams + " to " + maxParams + " bytes";
    }

    /** The exchange with this wire id, if this version knows it. */
    public static Optional<Exchange> byId(int id) {
        for (Exchange e : values()) {
            if (e.id == id) {
                return Optional.of(e);
            }
        }
        return Optional.empty();
    }
}
