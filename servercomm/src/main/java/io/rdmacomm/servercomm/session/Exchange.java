package io.rdmacomm.servercomm.session;

import java.util.Optional;

/**
 * What a session does after the request, identified on the wire by a stable 16-bit id. Ids are never reused:
 * a new exchange gets a new constant with a new id.
 */
public enum Exchange {
    /** The server writes back every byte it reads, synced after each read. No parameters. */
    ECHO(1, 0),
    /**
     * The server reads and discards exactly the announced number of bytes, then answers with a
     * {@link SessionProtocol#SINK_ACK_MAGIC sink acknowledgement} carrying the count it received. Parameter: the
     * total byte count as an unsigned 64-bit big-endian integer below {@link Long#MAX_VALUE}.
     */
    SINK(2, 8);

    private final int id;
    private final int paramsLength;

    Exchange(int id, int paramsLength) {
        this.id = id;
        this.paramsLength = paramsLength;
    }

    /** The id on the wire. */
    public int id() {
        return id;
    }

    /** The exact length of this exchange's parameters in bytes. */
    public int paramsLength() {
        return paramsLength;
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
