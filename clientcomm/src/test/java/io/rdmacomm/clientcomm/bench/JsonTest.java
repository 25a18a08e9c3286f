package io.rdmacomm.clientcomm.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 30, unit = TimeUnit.SECONDS)
class JsonTest {

    @Test
    void aLatencyResultIsOneObjectOnOneLineWithTransportTestSizeAndFigures() throws Exception {
        Histogram h = Runs.newHistogram();
        h.recordValue(23_000);
        String line = Json.write(LatencyResult.of("tcp", "blocking", "tcp://127.0.0.1:9", 8, 100, h, 0));

        assertFalse(line.contains("\n"));
        JsonNode n = Json.MAPPER.readTree(line);
        assertEquals("tcp", n.get("transport").asText());
        assertEquals("latency", n.get("test").asText());
        assertEquals(8, n.get("size").asLong());
        assertEquals(1, n.get("iterations").asLong());
        for (String f : List.of("p50_us", "p90_us", "p99_us", "p999_us", "max_us", "mean_us",
                "allocated_bytes_per_round_trip")) {
            assertTrue(n.get(f).isNumber(), () -> f + " missing or not a number in " + line);
        }
        assertEquals(23.0, n.get("p50_us").asDouble(), 0.05);
    }

    @Test
    void aBandwidthResultCarriesGigabytesPerSecond() throws Exception {
        JsonNode n = Json.MAPPER.readTree(Json.write(
                BandwidthResult.of("raw-nio", "blocking", "tcp://127.0.0.1:9", 65536, 1_000_000_000L, 500_000_000L)));
        assertEquals("raw-nio", n.get("transport").asText());
        assertEquals("bandwidth", n.get("test").asText());
        assertEquals(65536, n.get("size").asLong());
        assertEquals(1_000_000_000L, n.get("total_bytes").asLong());
        assertEquals(2.0, n.get("gb_per_s").asDouble(), 1e-9);
    }
}
