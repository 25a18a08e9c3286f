package io.rdmacomm.systemtests;

import java.util.List;

/** {@link ExchangesEndToEnd} on rdma:// (skipped with the reason where no provider is available). */
class RdmaExchangesEndToEndTest extends ExchangesEndToEnd {
    static List<String> schemes() {
        return List.of("rdma");
    }
}
