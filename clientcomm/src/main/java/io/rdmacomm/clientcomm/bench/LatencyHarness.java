package io.rdmacomm.clientcomm.bench;

import io.rdmacomm.api.Endpoint;
import java.io.IOException;
import java.util.concurrent.Callable;
import org.HdrHistogram.Histogram;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * What every latency command does: check the options, connect, run one round trip and check it, warm up and
 * measure ({@link Runs#latency}), print the {@link LatencyResult} as text or JSON. A command only says what it
 * measures ({@link #connect}), so ours and the baselines are measured the same way.
 */
public abstract class LatencyHarness implements Callable<Integer> {
    @Spec
    public CommandSpec spec;

    @Mixin
    public Options.Latency latency;

    @Mixin
    public Options.Output output;

    /**
     * Connects to {@code endpoint} for round trips of {@code size} bytes; if it fails, nothing stays open.
     *
     * @throws picocli.CommandLine.ParameterException if the endpoint does not suit the command
     */
    protected abstract Measured<? extends RoundTrip> connect(Endpoint endpoint, int size) throws IOException;

    @Override
    public final Integer call() throws Exception {
        latency.validate(spec);
        Endpoint endpoint = Options.endpoint(spec);
        AllocationMeter meter = AllocationMeter.create();
        try (Measured<? extends RoundTrip> measured = connect(endpoint, (int) latency.size)) {
            measured.start().run();
            measure(spec, latency, output, meter, measured.subject(), measured.transport(), measured.mode(),
                    measured.endpoint());
        }
        return 0;
    }

    /**
     * What a latency command does once connected, for the harness's commands and for baselines that are not
     * reached through an {@link Endpoint} (aeron-latency): one round trip checked, the warm-up and the measured round
     * trips as {@code latency} says, the {@link LatencyResult} printed as {@code output} says.
     */
    public static void measure(CommandSpec spec, Options.Latency latency, Options.Output output, AllocationMeter meter,
            RoundTrip rt, String transport, String mode, String endpoint) throws IOException {
        rt.roundTrip();
        rt.checkLast();
        Histogram histogram = Runs.newHistogram();
        long[] window = latency.percentileWindow > 0 ? new long[latency.percentileWindow] : null;
        Runs.Allocated allocated;
        try (Progress progress = output.progress(spec.name(), latency.warmup + latency.iterations, "round trips")) {
            allocated = Runs.latency(rt, latency.warmup, latency.iterations, histogram, window, progress, meter,
                    latency.pauseFile == null ? null : Runs.Pause.file(latency.pauseFile));
        }
        LatencyResult result = LatencyResult.of(transport, mode, endpoint, latency.size, latency.warmup, histogram,
                window, allocated);
        output.print(spec, result, result.describe());
    }
}
