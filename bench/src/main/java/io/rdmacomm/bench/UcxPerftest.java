package io.rdmacomm.bench;

import io.rdmacomm.clientcomm.bench.BandwidthResult;
import io.rdmacomm.clientcomm.bench.Json;
import io.rdmacomm.clientcomm.bench.LatencyResult;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Turns the output of a {@code ucx_perftest} client run into the JSON object {@code bench/compare} records, with
 * the field names of {@link LatencyResult} and {@link BandwidthResult} for the figures compared.
 *
 * <p>ucx_perftest (UCX 1.13) ends with one line of final figures:
 * <pre>
 * Final:  ITERATIONS  LAT_P50  LAT_AVG  LAT_OVERALL  BW_AVG  BW_OVERALL  MSGRATE_AVG  MSGRATE_OVERALL
 * </pre>
 * Latencies are in microseconds and, for the ping-pong tests ({@code *_lat}), one-way: half a round trip; the
 * percentile column is the 50th unless {@code -R} said otherwise. For the bandwidth tests that column holds the
 * overhead per message instead. Bandwidth is in ucx_perftest's MB/s, which are MiB (2^20 bytes) per second. A run
 * of few large messages prints {@code inf} in the average columns; only the percentile and overall ones are read.
 */
final class UcxPerftest {
    static final String TRANSPORT = "ucx_perftest";
    /** The figures' columns; a short run's "average" columns may read inf (unused here, so allowed). */
    private static final Pattern FINAL = Pattern.compile(
            "^Final:\\s+(\\d+)((?:\\s+(?:[0-9.]+|inf|-?nan)){7})\\s*$", Pattern.MULTILINE);
    private static final double MIB = 1 << 20;

    private UcxPerftest() {
    }

    /**
     * The latency figures of a ping-pong test: round trip = 2 × the one-way figures ucx_perftest prints.
     *
     * @param p50Us round-trip p50 (2 × the percentile column)
     * @param meanUs round-trip mean over the whole run (2 × the "overall" latency column)
     */
    record Latency(String transport, String test, String mode, long size, long iterations, double p50Us,
            double meanUs, double oneWayP50Us, double oneWayMeanUs) {
    }

    /**
     * The bandwidth figures of a streaming test.
     *
     * @param mibPerS the "overall" bandwidth column
     * @param gbPerS the same in 10^9 bytes per second, as {@link BandwidthResult#gbPerS()}
     * @param messagesPerS the "overall" message rate column
     */
    record Bandwidth(String transport, String test, String mode, long size, long iterations, long totalBytes,
            double mibPerS, double gbPerS, double messagesPerS) {
    }

    /**
     * Parses the output of {@code ucx_perftest HOST -t TEST -s SIZE ...}.
     *
     * @param test the ucx_perftest test name: a latency record for {@code *_lat}, else a bandwidth record
     * @throws IllegalArgumentException if the output has no final line (ucx_perftest failed: the message quotes
     *     the end of the output)
     */
    static Record parse(String test, long size, String output) {
        Matcher m = FINAL.matcher(output);
        if (!m.find()) {
            String tail = output.strip();
            tail = tail.length() > 2000 ? "..." + tail.substring(tail.length() - 2000) : tail;
            throw new IllegalArgumentException("no 'Final:' line in the output of ucx_perftest -t " + test
                    + (tail.isEmpty() ? " (it printed nothing)" : ":\n" + tail));
        }
        long iterations = Long.parseLong(m.group(1));
        String[] f = m.group(2).strip().split("\\s+");
        double percentile = Double.parseDouble(f[0]);
        double overallLatency = Double.parseDouble(f[2]);
        double overallBandwidth = Double.parseDouble(f[4]);
        if (test.endsWith("_lat")) {
            return new Latency(TRANSPORT, LatencyResult.TEST, test, size, iterations, 2 * percentile,
                    2 * overallLatency, percentile, overallLatency);
        }
        return new Bandwidth(TRANSPORT, BandwidthResult.TEST, test, size, iterations, iterations * size,
                overallBandwidth, overallBandwidth * MIB / 1e9, Double.parseDouble(f[6]));
    }

    /**
     * {@code UcxPerftest TEST SIZE < OUTPUT}: prints the figures of a ucx_perftest client run as one JSON line.
     * Exits 1 when the output holds no final line, 2 on bad arguments.
     */
    public static void main(String[] args) throws IOException {
        if (args.length != 2 || !args[1].matches("\\d+")) {
            System.err.println("usage: UcxPerftest TEST SIZE < ucx_perftest-output");
            System.exit(2);
        }
        String output = readAll(System.in);
        try {
            System.out.println(Json.write(parse(args[0].toLowerCase(Locale.ROOT), Long.parseLong(args[1]), output)));
        } catch (IllegalArgumentException e) {
            System.err.println("compare: " + e.getMessage());
            System.exit(1);
        }
    }

    private static String readAll(InputStream in) throws IOException {
        return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
}
