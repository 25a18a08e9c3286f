package io.rdmacomm.bench;

import io.rdmacomm.clientcomm.bench.Options;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * What the machine itself does between two cores, with none of our code: two threads pass a counter back and forth
 * (a cache line's round trip between the cores) and hand over 1 MiB buffers (one thread writes a buffer, the other
 * copies it out: the shape of a one-host bulk transfer). On a virtual machine whose virtual CPUs the host moves
 * between physical cores, both figures change several-fold with where they run, within seconds. bench/compare runs
 * {@code --seconds} at the start of every row and records the spread beside the row's runs.
 */
@Command(name = "core-to-core", mixinStandardHelpOptions = true, sortOptions = false, usageHelpAutoWidth = true,
        description = {
            "The machine's core-to-core figures, no communicator: a cache line's round trip between two spinning "
                + "threads (ns) and 1 MiB buffers written by one thread and copied out by the other (GB/s, 10^9 B/s).",
            "One probe takes under a second; --seconds repeats short ones and summarises their spread, as "
                + "bench/compare does at the start of every row."})
final class CoreToCore implements Callable<Integer> {
    private static final int HANDOVER_SIZE = 1 << 20;
    /** How long a thread spins for its partner before it gives up (a partner that never runs: a stuck probe). */
    private static final long GIVE_UP_NANOS = TimeUnit.SECONDS.toNanos(10);

    @Spec
    CommandSpec spec;

    @Mixin
    Options.Output output;

    @Option(names = {"-n", "--round-trips"}, paramLabel = "N", defaultValue = "100000",
            description = "timed round trips of the cache line (default: ${DEFAULT-VALUE}), after as many untimed")
    long roundTrips;

    @Option(names = "--handovers", paramLabel = "N", defaultValue = "64",
            description = "timed 1 MiB hand-overs (default: ${DEFAULT-VALUE}), after as many untimed")
    int handovers;

    @Option(names = "--seconds", paramLabel = "S", defaultValue = "0",
            description = "instead: short probes (10 000 round trips, 16 hand-overs) again and again for S seconds, "
                + "summarised: medians, extremes, the share of probes below half the best hand-over, and the "
                + "smallest of five consecutive windows' mean hand-over over their median")
    double seconds;

    /** The figures, as the other baselines' JSON: fields named for what they are. */
    record Result(String test, long round_trips, double round_trip_ns, int handovers, double handover_gb_per_s) {
        String describe() {
            return String.format(Locale.ROOT, "core to core: cache line round trip %.0f ns (%d), 1 MiB hand-over "
                    + "%.2f GB/s (%d)", round_trip_ns, round_trips, handover_gb_per_s, handovers);
        }
    }

    /** {@code --seconds}: the probes' spread over a stretch of time. */
    record Spread(String test, double seconds, int probes, double round_trip_ns_median, double round_trip_ns_min,
            double round_trip_ns_max, double handover_gb_per_s_median, double handover_gb_per_s_min,
            double handover_gb_per_s_max, double slow_share, double windows_min_over_median) {
        String describe() {
            return String.format(Locale.ROOT, "core to core over %.0f s, %d probes: cache line round trip median %.0f"
                    + " ns (%.0f to %.0f), 1 MiB hand-over median %.2f GB/s (%.2f to %.2f); %.0f %% of probes below"
                    + " half the best hand-over; five windows' smallest mean / median %.2f", seconds, probes,
                    round_trip_ns_median, round_trip_ns_min, round_trip_ns_max, handover_gb_per_s_median,
                    handover_gb_per_s_min, handover_gb_per_s_max, 100 * slow_share, windows_min_over_median);
        }
    }

    private static final int SLICE_ROUND_TRIPS = 10_000;
    private static final int SLICE_HANDOVERS = 16;

    @Override
    public Integer call() throws Exception {
        Options.check(spec, roundTrips > 0, "--round-trips must be positive, got " + roundTrips);
        Options.check(spec, handovers > 0, "--handovers must be positive, got " + handovers);
        Options.check(spec, seconds >= 0 && seconds <= 3600, "--seconds must be 0 to 3600, got " + seconds);
        if (seconds > 0) {
            Spread s = spread();
            output.print(spec, s, s.describe());
            return 0;
        }
        long pingNanos = pingPong(roundTrips, roundTrips);
        long handoverNanos = handOver(handovers, handovers);
        Result r = new Result("core-to-core", roundTrips, (double) pingNanos / roundTrips, handovers,
                (double) handovers * HANDOVER_SIZE / handoverNanos);
        output.print(spec, r, r.describe());
        return 0;
    }

    private Spread spread() throws InterruptedException {
        pingPong(SLICE_ROUND_TRIPS * 10L, 1); // the JIT's turn, untimed
        handOver(SLICE_HANDOVERS * 4, 1);
        List<double[]> probes = new ArrayList<>();
        long end = System.nanoTime() + (long) (seconds * 1e9);
        do {
            double rtt = (double) pingPong(0, SLICE_ROUND_TRIPS) / SLICE_ROUND_TRIPS;
            double gbps = (double) SLICE_HANDOVERS * HANDOVER_SIZE / handOver(0, SLICE_HANDOVERS);
            probes.add(new double[] {rtt, gbps});
        } while (System.nanoTime() - end < 0);
        double[] rtts = probes.stream().mapToDouble(p -> p[0]).toArray();
        double[] gbps = probes.stream().mapToDouble(p -> p[1]).toArray();
        double best = Arrays.stream(gbps).max().orElseThrow();
        double slow = Arrays.stream(gbps).filter(g -> g < best / 2).count() / (double) gbps.length;
        int windows = Math.min(5, gbps.length);
        double[] means = new double[windows];
        for (int w = 0; w < windows; w++) {
            int from = w * gbps.length / windows;
            int to = (w + 1) * gbps.length / windows;
            means[w] = Arrays.stream(gbps, from, to).average().orElseThrow();
        }
        return new Spread("core-to-core", seconds, probes.size(), CompareReport.median(rtts),
                Arrays.stream(rtts).min().orElseThrow(), Arrays.stream(rtts).max().orElseThrow(),
                CompareReport.median(gbps), Arrays.stream(gbps).min().orElseThrow(), best, slow,
                Arrays.stream(means).min().orElseThrow() / CompareReport.median(means));
    }

    /** Round trips of a counter between this thread and another: {@code untimed}, then {@code timed}; their nanos. */
    private static long pingPong(long untimed, long timed) throws InterruptedException {
        AtomicLong line = new AtomicLong();
        long total = untimed + timed;
        Thread partner = start("core-to-core pong", () -> {
            for (long i = 0; i < total; i++) {
                await(line, 2 * i + 1);
                line.set(2 * i + 2);
            }
        });
        long start = 0;
        for (long i = 0; i < total; i++) {
            if (i == untimed) {
                start = System.nanoTime();
            }
            line.set(2 * i + 1);
            await(line, 2 * i + 2);
        }
        long nanos = System.nanoTime() - start;
        partner.join();
        return nanos;
    }

    /**
     * Hand-overs of a 1 MiB buffer: this thread fills it, the other copies it into its own; {@code untimed}, then
     * {@code timed}; their nanos.
     */
    private static long handOver(int untimed, int timed) throws InterruptedException {
        ByteBuffer shared = ByteBuffer.allocateDirect(HANDOVER_SIZE);
        ByteBuffer pattern = ByteBuffer.allocateDirect(HANDOVER_SIZE);
        ByteBuffer copy = ByteBuffer.allocateDirect(HANDOVER_SIZE);
        AtomicLong turn = new AtomicLong();
        int total = untimed + timed;
        Thread partner = start("core-to-core copier", () -> {
            for (long i = 0; i < total; i++) {
                await(turn, 2 * i + 1);
                copy.put(0, shared, 0, HANDOVER_SIZE);
                turn.set(2 * i + 2);
            }
        });
        long start = 0;
        for (int i = 0; i < total; i++) {
            if (i == untimed) {
                start = System.nanoTime();
            }
            pattern.putLong(0, i);
            shared.put(0, pattern, 0, HANDOVER_SIZE);
            turn.set(2L * i + 1);
            await(turn, 2L * i + 2);
        }
        long nanos = System.nanoTime() - start;
        partner.join();
        if (copy.getLong(0) != total - 1) {
            throw new IllegalStateException("the copier's last buffer holds hand-over " + copy.getLong(0) + ", not "
                    + (total - 1));
        }
        return nanos;
    }

    private static Thread start(String name, Runnable body) {
        Thread t = new Thread(body, name);
        t.setDaemon(true);
        t.start();
        return t;
    }

    /** Spins until {@code v} holds {@code value}; gives up after {@link #GIVE_UP_NANOS}. */
    private static void await(AtomicLong v, long value) {
        long deadline = 0;
        for (int spins = 1; v.get() != value; spins++) {
            Thread.onSpinWait();
            if ((spins & 0xFFFF) == 0) {
                long now = System.nanoTime();
                if (deadline == 0) {
                    deadline = now + GIVE_UP_NANOS;
                } else if (now - deadline > 0) {
                    throw new IllegalStateException("core-to-core: the other thread did not answer within 10 s"
                            + " (it never ran: is there a second core?)");
                }
            }
        }
    }
}
