package io.rdmacomm.gvirtus;

import org.junit.jupiter.api.Timeout;

/** {@link EndToEndTest} over {@code tcp://} on loopback: real sockets. */
@Timeout(60)
class TcpEndToEndTest extends EndToEndTest {
    @Override
    String serverUri() {
        return "tcp://127.0.0.1:0";
    }
}
