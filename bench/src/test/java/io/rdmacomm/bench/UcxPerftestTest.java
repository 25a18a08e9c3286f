package io.rdmacomm.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.rdmacomm.clientcomm.bench.Json;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** ucx_perftest's output as UCX 1.13 prints it, turned into the figures bench/compare compares. */
@Timeout(value = 10, unit = TimeUnit.SECONDS)
class UcxPerftestTest {
    private static final String HEADER = """
            +--------------+--------------+------------------------------+---------------------+-----------------------+
            |              |              |        latency (usec)        |   bandwidth (MB/s)  |  message rate (msg/s) |
            +--------------+--------------+----------+---------+---------+----------+----------+-----------+-----------+
            |    Stage     | # iterations | 50.0%ile | average | overall |  average |  overall |  average  |  overall  |
            +--------------+--------------+----------+---------+---------+----------+----------+-----------+-----------+
            """;

    @Test
    void aLatencyTestGivesTheRoundTripAsTwiceTheOneWayFigures() throws Exception {
        String output = HEADER
                + "Final:                 20000      0.165     0.369     0.371       20.66      20.66     2707837     2707837\n";
        var r = assertInstanceOf(UcxPerftest.Latency.class, UcxPerftest.parse("tag_lat", 8, output));
        assertEquals(20000, r.iterations());
        assertEquals(0.33, r.p50Us(), 1e-9);
        assertEquals(0.742, r.meanUs(), 1e-9);
        assertEquals(0.165, r.oneWayP50Us(), 1e-9);
        JsonNode json = Json.MAPPER.readTree(Json.write(r));
        assertEquals("ucx_perftest", json.get("transport").asText());
        assertEquals("latency", json.get("test").asText());
        assertEquals("tag_lat", json.get("mode").asText());
        assertEquals(0.33, json.get("p50_us").asDouble(), 1e-9, "the field CompareReport reads for latency rows");
    }

    @Test
    void aBandwidthTestGivesTheOverallColumnInGigabytesPerSecond() throws Exception {
        String output = HEADER.replace("latency (usec)", "overhead (usec)")
                + "Final:                  2000    107.409   110.190   110.190     9075.27    9000.00        9075        9000\n";
        var r = assertInstanceOf(UcxPerftest.Bandwidth.class, UcxPerftest.parse("stream_bw", 1 << 20, output));
        assertEquals(2000L << 20, r.totalBytes());
        assertEquals(9000.00, r.mibPerS(), 1e-9);
        assertEquals(9000.00 * 1048576 / 1e9, r.gbPerS(), 1e-9, "ucx_perftest's MB are MiB");
        assertEquals(9.437184, Json.MAPPER.readTree(Json.write(r)).get("gb_per_s").asDouble(), 1e-9);
        assertEquals(9000, r.messagesPerS(), 1e-9, "the overall message rate, the last column");
    }

    @Test
    void aShortRunsInfiniteAverageColumnsAreNotRead() {
        String output = HEADER.replace("latency (usec)", "overhead (usec)")
                + "Final:                   256   4255.175       inf  4302.464        0.00    3718.80           0         232\n";
        var r = assertInstanceOf(UcxPerftest.Bandwidth.class, UcxPerftest.parse("ucp_am_bw", 16 << 20, output));
        assertEquals(256L * (16 << 20), r.totalBytes());
        assertEquals(3718.80, r.mibPerS(), 1e-9);
        assertEquals(232, r.messagesPerS(), 1e-9);
    }

    @Test
    void progressLinesBeforeTheFinalOneAreIgnored() {
        String output = HEADER
                + "                      500000      0.170     0.380     0.380       20.10      20.10     2600000     2600000\n"
                + "Final:                1000000      0.160     0.360     0.370       20.60      20.60     2700000     2700000\n";
        var r = assertInstanceOf(UcxPerftest.Latency.class, UcxPerftest.parse("tag_lat", 8, output));
        assertEquals(1_000_000, r.iterations());
        assertEquals(0.32, r.p50Us(), 1e-9);
    }

    @Test
    void outputWithoutAFinalLineIsAnErrorQuotingIt() {
        String output = "[1700000000.000000] [host:1234:0]  sock.c:325  UCX  ERROR connect(fd=5) failed: Connection refused\n";
        var e = assertThrows(IllegalArgumentException.class, () -> UcxPerftest.parse("tag_lat", 8, output));
        assertTrue(e.getMessage().startsWith("no 'Final:' line in the output of ucx_perftest -t tag_lat:"),
                e.getMessage());
        assertTrue(e.getMessage().contains("Connection refused"), e.getMessage());
    }

    @Test
    void emptyOutputIsNamedAsSuch() {
        var e = assertThrows(IllegalArgumentException.class, () -> UcxPerftest.parse("stream_bw", 8, ""));
        assertTrue(e.getMessage().endsWith("(it printed nothing)"), e.getMessage());
    }
}
