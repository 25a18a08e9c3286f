package io.rdmacomm.clientcomm.bench;

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
 * @param percentileSamples how many round trips the percentiles and max are over: all measured ones, or the last
 *     {@code --percentile-window} of them (as ucx_perftest, over its last 2048)
 * @param p50AllUs the p50 over all measured round trips (equal to {@code p50Us} without a window)
 * @param meanUs the mean over all measured round trips
 * @param allocatedBytesPerRoundTrip bytes allocated by the measuring thread during the measured loop, divided by
 *     {@code iterations}
 * @param processAllocatedBytesPerRoundTrip bytes allocated by all threads of the measuring JVM during the measured
 *     loop, divided by {@code iterations} (-1: not counted by this JVM)
 */
public record LatencyResult(String transport, String test, String mode, String endpoint, long size, long warmup,
        long iterations, long percentileSamples, double p50Us, double p90Us, double p99Us, double p999Us,
        double maxUs, double p50AllUs, double meanUs, double allocatedBytesPerRoundTrip,
        double processAllocatedBytesPerRoundTrip) {

    public static final String TEST = "latency";

    /** The result of a run whose round trips (in nanoseconds) are in {@code histogram}. */
    public static LatencyResult of(String transport, String mode, String endpoint, long size, long warmup,
            Histogram histogram, long allocatedBytes) {
        return of(transport, mode, endpoint, size, warmup, histogram, null, new Runs.Allocated(allocatedBytes, -1));
    }

    /**
     * The result of a run whose round trips (in nanoseconds) are in {@code histogram}; with a {@code window} (the
     * last round trips, {@link Runs#latency(RoundTrip, long, long, Histogram, long[], Progress, AllocationMeter)}),
     * the percentiles are over those alone.
     */
    public static LatencyResult of(String transport, String mode, String endpoint, long size, long warmup,
            Histogram histogram, long[] window, Runs.Allocated allocated) {
        long n = histogram.getTotalCount();
        if (n == 0) {
            throw new IllegalArgumentException("no round trip was recorded");
        }
        Histogram percentiles = histogram;
        if (window != null && n > window.length) {
            percentiles = Runs.newHistogram();
            for (long v : window) {
                percentiles.recordValue(Math.min(v, Runs.HIGHEST_NANOS));
            }
        }
        double process = allocated.process() < 0 ? -1 : (double) allocated.process() / n;
        return new LatencyResult(transport, TEST, mode, endpoint, size, warmup, n, percentiles.getTotalCount(),
                micros(percentiles.getValueAtPercentile(50.0)), micros(percentiles.getValueAtPercentile(90.0)),
                micros(percentiles.getValueAtPercentile(99.0)), micros(percentiles.getValueAtPercentile(99.9)),
                micros(percentiles.getMaxValue()), micros(histogram.getValueAtPercentile(50.0)),
                histogram.getMean() / 1000.0, (double) allocated.thread() / n, process);
    }

    private static double micros(long nanos) {
        return nanos / 1000.0;
    }

    /** The result for people, two lines. */
    public String describe() {
        return String.format(Locale.ROOT, "%s %s latency, %d B messages, %d round trips after %d warm-up (%s)%n"
                + "round trip us, over the last %d: p50 %.2f  p90 %.2f  p99 %.2f  p99.9 %.2f  max %.2f"
                + "  (over all: p50 %.2f, mean %.2f)%n"
                + "allocated per round trip: %.2f bytes",
                transport, mode, size, iterations, warmup, endpoint, percentileSamples, p50Us, p90Us, p99Us, p999Us,
                maxUs, p50AllUs, meanUs,
                allocatedBytesPerRoundTrip);
    }
}
