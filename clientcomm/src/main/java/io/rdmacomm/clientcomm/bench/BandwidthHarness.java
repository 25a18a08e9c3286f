package io.rdmacomm.clientcomm.bench;

import io.rdmacomm.api.Endpoint;
import java.io.IOException;
import java.util.concurrent.Callable;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * What every bandwidth command does: check the options, connect, stream the warm-up and then the total from one
 * pattern buffer, timing the total to the receiver's acknowledgement ({@link Runs#bandwidth}), print the {@link BandwidthResult} as text or JSON.
 * A command only says where the bytes go ({@link #connect}).
 */
public abstract class BandwidthHarness implements Callable<Integer> {
    @Spec
    public CommandSpec spec;

    @Mixin
    public Options.Bandwidth bandwidth;

    @Mixin
    public Options.Output output;

    /**
     * Connects to {@code endpoint} for a run of {@code total} bytes in writes of {@code size}; if it fails, nothing
     * stays open.
     *
     * @throws picocli.CommandLine.ParameterException if the endpoint does not suit the command
     */
    protected abstract Measured<? extends BulkSender> connect(Endpoint endpoint, int size, long total)
            throws IOException;

    @Override
    public final Integer call() throws Exception {
        bandwidth.validate(spec);
        Endpoint endpoint = Options.endpoint(spec);
        long warmup = bandwidth.warmup;
        try (Measured<? extends BulkSender> measured = connect(endpoint, (int) bandwidth.size,
                warmup + bandwidth.total)) {
            measured.start().run();
            long nanos;
            try (Progress progress = output.progress(spec.name(), warmup + bandwidth.total, "bytes")) {
                nanos = Runs.bandwidth(measured.subject(), Messages.pattern((int) bandwidth.size), warmup,
                        bandwidth.total, progress);
            }
            BandwidthResult result = BandwidthResult.of(measured.transport(), measured.mode(), measured.endpoint(),
                    bandwidth.size, bandwidth.total, warmup, nanos);
            output.print(spec, result, result.describe());
        }
        return 0;
    }
}
