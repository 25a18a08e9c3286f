package io.rdmacomm.clientcomm.bench;

import java.io.IOException;

/**
 * One measured exchange over buffers prepared once, typically a ping-pong: send a message, wait for it to come back
 * whole. Implementations must not allocate per call, since the latency loop measures allocation around them.
 */
public interface RoundTrip {
    void roundTrip() throws IOException;

    /**
     * Checks what the last round trip brought back; the harness calls it once, before measuring. A round trip that
     * brings nothing back (a put) has nothing to check.
     *
     * @throws IOException if it is not what was sent
     */
    default void checkLast() throws IOException {
    }
}
