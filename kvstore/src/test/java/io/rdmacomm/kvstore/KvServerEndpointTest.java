package io.rdmacomm.kvstore;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import io.rdmacomm.api.Endpoint;
import io.rdmacomm.api.EndpointOption;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** What the server makes of its data endpoint before serving it (no transport involved). */
@Timeout(30)
class KvServerEndpointTest {
    private static Endpoint served(String uri) {
        return KvServer.dataEndpoint(KvServerConfig.of("127.0.0.1", 0, Endpoint.parse(uri))
                .withMemory(64L << 20, 1L << 20));
    }

    @Test
    void rdmaSessionsSpinBrieflyUnlessTheUriSays() {
        Endpoint e = served("rdma://127.0.0.1:0");
        assertEquals(Duration.ofNanos(10_000), e.duration(EndpointOption.BUSY_POLL));
        assertEquals((64L << 20) + (64L << 20), e.size(EndpointOption.MAX_REGISTERED));
        assertEquals(Duration.ofNanos(50_000),
                served("rdma://127.0.0.1:0?busyPoll=50us").duration(EndpointOption.BUSY_POLL));
        assertEquals(Duration.ZERO, served("rdma://127.0.0.1:0?busyPoll=0").duration(EndpointOption.BUSY_POLL));
    }

    @Test
    void tcpIsServedAsGivenWithAThreadPerConnection() {
        Endpoint e = KvServer.dataEndpoint(KvServerConfig.of("127.0.0.1", 0, Endpoint.parse("tcp://127.0.0.1:0"))
                .withLoops(0));
        assertFalse(e.isSet(EndpointOption.BUSY_POLL), "tcp:// reads on a blocking channel unless busyPoll is set");
        assertEquals(Endpoint.parse("tcp://127.0.0.1:0"), e);
    }

    @Test
    void eventLoopsBoundTheirWritesUnlessTheUriSays() {
        assertEquals(Duration.ofSeconds(10), served("tcp://127.0.0.1:0").duration(EndpointOption.READ_TIMEOUT));
        assertEquals(Duration.ofSeconds(10), served("rdma://127.0.0.1:0").duration(EndpointOption.READ_TIMEOUT));
        assertEquals(Duration.ofSeconds(2),
                served("tcp://127.0.0.1:0?readTimeout=2s").duration(EndpointOption.READ_TIMEOUT));
        assertEquals(Duration.ZERO, served("tcp://127.0.0.1:0?readTimeout=0").duration(EndpointOption.READ_TIMEOUT));
    }
}
