package io.rdmacomm.clientcomm.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.TimeUnit;
import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 30, unit = TimeUnit.SECONDS)
class LatencyResultTest {

    @Test
    void percentilesComeFromTheHistogramInMicroseconds() {
        Histogram h = Runs.newHistogram();
        for (long us = 1; us <= 1000; us++) {
            h.recordValue(us * 1000);
        }
        LatencyResult r = LatencyResult.of("tcp", "blocking", "tcp://127.0.0.1:1", 8, 5, h, 4000);

        // HdrHistogram with 3 significant digits: values within 0.1 %
        assertEquals(500, r.p50Us(), 0.5);
        assertEquals(900, r.p90Us(), 0.9);
        assertEquals(990, r.p99Us(), 1.0);
        assertEquals(999, r.p999Us(), 1.0);
        assertEquals(1000, r.maxUs(), 1.0);
        assertEquals(500.5, r.meanUs(), 0.5);
        assertEquals(1000, r.iterations());
        assertEquals(4.0, r.allocatedBytesPerRoundTrip());
        assertEquals("latency", r.test());
    }

    @Test
    void aSingleOutlierShowsInMaxAndTheTailOnly() {
        Histogram h = Runs.newHistogram();
        for (int i = 0; i < 9999; i++) {
            h.recordValue(20_000);
        }
        h.recordValue(5_000_000);
        LatencyResult r = LatencyResult.of("tcp", "blocking", "e", 8, 0, h, 0);

        assertEquals(20, r.p50Us(), 0.05);
        assertEquals(20, r.p999Us(), 0.05);
        assertEquals(5000, r.maxUs(), 5);
        assertEquals(0.0, r.allocatedBytesPerRoundTrip());
    }

    @Test
    void withAWindowThePercentilesAreOverTheLastRoundTripsAndTheMeanOverAll() throws Exception {
        // 10 000 round trips of 100 us, then 16 of 1 us: the window holds the last 16
        long[] times = new long[10_016];
        java.util.Arrays.fill(times, 0, 10_000, 100_000);
        java.util.Arrays.fill(times, 10_000, 10_016, 1_000);
        int[] next = {0};
        long[] clock = {0};
        Histogram h = Runs.newHistogram();
        long[] window = new long[16];
        // the histogram and the ring as Runs.latency fills them
        for (long t : times) {
            h.recordValue(t);
            window[next[0]] = t;
            next[0] = (next[0] + 1) % window.length;
            clock[0] += t;
        }
        LatencyResult r = LatencyResult.of("rdma", "busy-poll", "e", 8, 0, h, window, new Runs.Allocated(0, 0));

        assertEquals(16, r.percentileSamples());
        assertEquals(1.0, r.p50Us(), 0.01);
        assertEquals(100.0, r.p50AllUs(), 0.1);
        assertEquals(clock[0] / 10_016.0 / 1000, r.meanUs(), 0.1);
        assertEquals(10_016, r.iterations());
    }

    @Test
    void theWindowOfRunsLatencyEndsWithTheLastRoundTrips() throws Exception {
        long[] window = new long[8];
        Runs.Allocated a = Runs.latency(() -> { }, 10, 100, Runs.newHistogram(), window, Progress.silent(),
                AllocationMeter.create());
        for (long v : window) {
            assertTrue(v >= 0 && v < 1_000_000_000L, "a round trip in ns: " + v);
        }
        assertTrue(a.thread() >= 0);
    }

    @Test
    void anEmptyHistogramIsRefused() {
        var e = assertThrows(IllegalArgumentException.class,
                () -> LatencyResult.of("tcp", "blocking", "e", 8, 0, Runs.newHistogram(), 0));
        assertTrue(e.getMessage().contains("no round trip"), e.getMessage());
    }

    @Test
    void describeNamesEveryPercentile() {
        Histogram h = Runs.newHistogram();
        h.recordValue(23_000);
        String text = LatencyResult.of("tcp", "busy-poll", "tcp://h:1", 8, 0, h, 0).describe();
        for (String part : new String[] {"p50 ", "p90 ", "p99 ", "p99.9 ", "max ", "allocated per round trip: 0.00",
            "busy-poll", "8 B"}) {
            assertTrue(text.contains(part), () -> "missing '" + part + "' in " + text);
        }
    }

    @Test
    void bandwidthIsBytesPerSecondInGigabytes() {
        BandwidthResult r = BandwidthResult.of("tcp", "blocking", "e", 1 << 20, 4_000_000_000L, 2_000_000_000L);
        assertEquals(2.0, r.gbPerS(), 1e-9);
        assertEquals(2.0, r.seconds(), 1e-9);
        assertThrows(IllegalArgumentException.class, () -> BandwidthResult.of("tcp", "blocking", "e", 1, 1, 0));
    }
}
