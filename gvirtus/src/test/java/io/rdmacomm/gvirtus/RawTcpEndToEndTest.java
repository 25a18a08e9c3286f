package io.rdmacomm.gvirtus;

import org.junit.jupiter.api.Timeout;

/** {@link EndToEndTest} over {@code tcp://…?wire=raw}, the wire a GVirtuS {@code TcpCommunicator} speaks. */
@Timeout(60)
class RawTcpEndToEndTest extends EndToEndTest {
    @Override
    String serverUri() {
        return "tcp://127.0.0.1:0?wire=raw";
    }
}
