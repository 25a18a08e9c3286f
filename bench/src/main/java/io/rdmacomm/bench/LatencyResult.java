package io.rdmacomm.bench;

import java.util.Locale;
import org.HdrHistogram.Histogram;

/**
 * The figures of one latency run: round-trip percentiles in microseconds and the bytes the measuring thread
 * allocated per round trip in steady state.
 *
 * @param transport the endpoint scheme, or {@code raw-nio} for the socket baseline
 * @param mode {@code blocking} or {@code busy-poll}
 * @param endpoint the endpoint measured
 * @param size message size in bytes (each way)
 * @param warmup round trips before the measured ones
 * @param iterations measured round trips
 * @param allocatedBytesPerRoundTrip bytes allocated by the measuring thread during the measured loop, divided by
 *     {@code iterations}
 */
record LatencyResult(String transport, String test, String mode, String endpoint, long size, long warmup,
        long iterations, double p50Us, double p90Us, double p99Us, double p999Us, double maxUs, double meanUs,
        double allocatedBytesPerRoundTrip) {

    static final String TEST = "latency";

    /** The result of a run whose round trips (in nanoseconds) are in {@code histogram}. */
    static LatencyResult of(String transport, String mode, String endpoint, long size, long warmup,
            Histogram histogram, long allocatedBytes) {
        long n = histogram.getTotalCount();
        if (n == 0) {
            throw new IllegalArgumentException("no round trip was recorded");
        }
        return new LatencyResult(transport, TEST, mode, endpoint, size, warmup, n,
                micros(histogram.getValueAtPercentile(50.0)), micros(histogram.getValueAtPercentile(90.0)),
                micros(histogram.getValueAtPercentile(99.0)), micros(histogram.getValueAtPercentile(99.9)),
                micros(histogram.getMaxValue()), histogram.getMean() / 1000.0, (double) allocatedBytes / n);
    }

    private static double micros(long nanos) {
        return nanos / 1000.0;
    }

    /** The result for people, two lines. */
    String describe() {
        return String.format(Locale.ROOT, "%s %s latency, %d B messages, %d round trips after %d warm-up (%s)%n"
                + "round trip us: p50 %.2f  p90 %.2f  p99 %.2f  p99.9 %.2f  max %.2f  (mean %.2f)%n"
                + "allocated per round trip: %.2f bytes",
                transport, mode, size, iterations, warmup, endpoint, p50Us, p90Us, p99Us, p999Us, maxUs, meanUs,
                allocatedBytesPerRoundTrip);
    }
}
