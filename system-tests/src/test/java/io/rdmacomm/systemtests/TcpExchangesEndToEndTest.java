package io.rdmacomm.systemtests;

import java.util.List;

/** {@link ExchangesEndToEnd} on tcp://. */
class TcpExchangesEndToEndTest extends ExchangesEndToEnd {
    static List<String> schemes() {
        return List.of("tcp");
    }
}
