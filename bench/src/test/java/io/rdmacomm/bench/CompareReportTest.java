package io.rdmacomm.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 30, unit = TimeUnit.SECONDS)
class CompareReportTest {

    private static String result(String row, String side, String field, double value) {
        return "{\"kind\":\"result\",\"row\":\"" + row + "\",\"side\":\"" + side + "\",\"" + field + "\":" + value
                + "}";
    }

    @Test
    void medianOfOddAndEvenCounts() {
        assertEquals(3.0, CompareReport.median(new double[] {5, 1, 3}));
        assertEquals(2.5, CompareReport.median(new double[] {4, 1, 2, 3}));
        assertTrue(Double.isNaN(CompareReport.median(new double[0])));
    }

    @Test
    void aLatencyRowComparesMediansAndChecksTheRatioFromBelow() {
        CompareReport r = CompareReport.of(List.of(
                "{\"kind\":\"row\",\"row\":\"lat\",\"label\":\"8 B\",\"metric\":\"p50_us\",\"unit\":\"us\","
                        + "\"baseline\":\"raw\",\"target_ratio\":1.10,\"better\":\"lower\"}",
                result("lat", "baseline", "p50_us", 20), result("lat", "ours", "p50_us", 21),
                result("lat", "baseline", "p50_us", 30), result("lat", "ours", "p50_us", 23),
                result("lat", "baseline", "p50_us", 19), result("lat", "ours", "p50_us", 99)));
        CompareReport.Row row = r.rows().get(0);

        assertEquals(20, row.baselineMedian());
        assertEquals(23, row.oursMedian());
        assertEquals(1.15, row.ratio(), 1e-9);
        assertFalse(row.met());
        assertTrue(r.table().contains("| 8 B | raw | 20 us | 23 us | 1.15 | <= 1.10 x | NO |"), r.table());
    }

    @Test
    void aBandwidthRowChecksTheRatioFromAbove() {
        CompareReport r = CompareReport.of(List.of(
                "{\"kind\":\"row\",\"row\":\"bw\",\"metric\":\"gb_per_s\",\"target_ratio\":0.9,"
                        + "\"better\":\"higher\"}",
                result("bw", "baseline", "gb_per_s", 4.0), result("bw", "ours", "gb_per_s", 3.7)));
        CompareReport.Row row = r.rows().get(0);
        assertEquals(0.925, row.ratio(), 1e-9);
        assertTrue(row.met());
    }

    @Test
    void anAbsoluteLimitReadsAnotherRowsRuns() {
        CompareReport r = CompareReport.of(List.of(
                "{\"kind\":\"row\",\"row\":\"lat\",\"metric\":\"p50_us\"}",
                "{\"kind\":\"row\",\"row\":\"alloc\",\"metric\":\"allocated_bytes_per_round_trip\","
                        + "\"source\":\"lat\",\"target_max\":0}",
                "{\"kind\":\"result\",\"row\":\"lat\",\"side\":\"ours\",\"p50_us\":20,"
                        + "\"allocated_bytes_per_round_trip\":0.0}",
                "{\"kind\":\"result\",\"row\":\"lat\",\"side\":\"ours\",\"p50_us\":20,"
                        + "\"allocated_bytes_per_round_trip\":48.0}",
                "{\"kind\":\"result\",\"row\":\"lat\",\"side\":\"ours\",\"p50_us\":20,"
                        + "\"allocated_bytes_per_round_trip\":48.0}"));
        CompareReport.Row alloc = r.rows().get(1);
        assertEquals(48.0, alloc.oursMedian());
        assertTrue(Double.isNaN(alloc.ratio()));
        assertFalse(alloc.met());
        assertEquals("<= 0", alloc.target());
    }

    @Test
    void anotherMetricOfARowsRunsIsComparedToo() {
        CompareReport r = CompareReport.of(List.of(
                "{\"kind\":\"row\",\"row\":\"ops\",\"metric\":\"ops_per_sec\"}",
                "{\"kind\":\"row\",\"row\":\"ops-p50\",\"metric\":\"p50_us\",\"source\":\"ops\","
                        + "\"target_ratio\":1.0,\"better\":\"lower\"}",
                "{\"kind\":\"result\",\"row\":\"ops\",\"side\":\"baseline\",\"ops_per_sec\":100,\"p50_us\":40}",
                "{\"kind\":\"result\",\"row\":\"ops\",\"side\":\"ours\",\"ops_per_sec\":150,\"p50_us\":30}"));
        CompareReport.Row p50 = r.rows().get(1);
        assertEquals(40, p50.baselineMedian());
        assertEquals(30, p50.oursMedian());
        assertEquals(0.75, p50.ratio(), 1e-9);
        assertTrue(p50.met());
    }

    @Test
    void theSummaryKeepsMetaMediansAndValues() {
        CompareReport r = CompareReport.of(List.of(
                "{\"kind\":\"meta\",\"machine\":\"2 cores\"}",
                "{\"kind\":\"row\",\"row\":\"lat\",\"metric\":\"p50_us\",\"target_ratio\":1.1}",
                result("lat", "baseline", "p50_us", 10), result("lat", "ours", "p50_us", 10.5)));
        JsonNode s = r.summary();
        assertEquals("2 cores", s.get("meta").get(0).get("machine").asText());
        JsonNode row = s.get("rows").get(0);
        assertEquals(1.05, row.get("ratio").asDouble(), 1e-9);
        assertTrue(row.get("met").asBoolean());
        assertEquals(10.5, row.get("ours_values").get(0).asDouble());
    }

    @Test
    void aRowWithoutRunsIsNotMet() {
        CompareReport r = CompareReport.of(List.of(
                "{\"kind\":\"row\",\"row\":\"lat\",\"metric\":\"p50_us\",\"target_ratio\":1.1}"));
        assertFalse(r.rows().get(0).met());
        assertTrue(r.table().contains("| - | - | - |"), r.table());
    }

    @Test
    void badLinesAreNamed() {
        var e = assertThrows(IllegalArgumentException.class, () -> CompareReport.of(List.of("{}", "not json")));
        assertTrue(e.getMessage().startsWith("line 1"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> CompareReport.of(List.of("nope")));
        assertTrue(e.getMessage().contains("line 1 is not JSON"), e.getMessage());
    }
}
