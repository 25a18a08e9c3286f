package io.rdmacomm.kvstore;

import io.rdmacomm.api.Endpoint;

/**
 * How values move on the data plane between the server's pool and a client.
 *
 * <p>On {@code tcp://} the transport emulates one-sided operations with frames on the connection's own socket and a
 * progress thread that owns the socket from the first one on: a one-sided GET there is the request, a PUT frame with
 * the value, its acknowledgement and the reply (four messages), and every message reaches the session's thread
 * through a hand-off. Inline, the same bytes travel in the reply (GET) or after the request (PUT): two messages, read
 * and written by the session's own thread. See README.md, benchmarks.
 */
public enum ValueTransfer {
    /** Inline on {@code tcp://}, one-sided everywhere else. */
    AUTO,
    /** The server puts a GET's value into the client's registered buffer and gets a PUT's value from it. */
    ONE_SIDED,
    /** A GET's value follows the reply, a PUT's value follows the request; the client reads it into its buffer. */
    INLINE;

    /** Whether values travel inline on a data plane served at {@code dataEndpoint}. */
    boolean inlineOn(Endpoint dataEndpoint) {
        return this == INLINE || this == AUTO && dataEndpoint.scheme().equals("tcp");
    }
}
