package io.rdmacomm.clientcomm.bench;

import java.util.Locale;

/**
 * The figures of one bandwidth run, timed from the first write to the receiver's acknowledgement of the last
 * byte.
 *
 * @param size bytes per write
 * @param totalBytes bytes timed (and acknowledged)
 * @param warmupBytes bytes streamed before them, untimed
 * @param gbPerS {@code totalBytes / seconds / 10^9}
 * @param messagesPerS writes (messages) of {@code size} per second: {@code ceil(totalBytes / size) / seconds}
 */
public record BandwidthResult(String transport, String test, String mode, String endpoint, long size, long totalBytes,
        long warmupBytes, double seconds, double gbPerS, double messagesPerS) {

    public static final String TEST = "bandwidth";

    public static BandwidthResult of(String transport, String mode, String endpoint, long size, long totalBytes,
            long nanos) {
        return of(transport, mode, endpoint, size, totalBytes, 0, nanos);
    }

    public static BandwidthResult of(String transport, String mode, String endpoint, long size, long totalBytes,
            long warmupBytes, long nanos) {
        if (nanos <= 0) {
            throw new IllegalArgumentException("elapsed time must be positive, got " + nanos + " ns");
        }
        double seconds = nanos / 1e9;
        return new BandwidthResult(transport, TEST, mode, endpoint, size, totalBytes, warmupBytes, seconds,
                totalBytes / seconds / 1e9, ((totalBytes + size - 1) / size) / seconds);
    }

    public String describe() {
        return String.format(Locale.ROOT, "%s %s bandwidth, %d B writes, %d bytes in %.3f s after %d untimed (%s)"
                + "%n%.3f GB/s", transport, mode, size, totalBytes, seconds, warmupBytes, endpoint, gbPerS);
    }
}
