package io.rdmacomm.bench;

import java.io.IOException;

/**
 * One ping-pong exchange over buffers prepared once: send a message, wait for it to come back whole.
 * Implementations must not allocate per call, since the latency loop measures allocation around them.
 */
interface RoundTrip {
    void roundTrip() throws IOException;
}
