package io.rdmacomm.bench;

import java.net.InetSocketAddress;
import java.util.concurrent.Callable;
import org.HdrHistogram.Histogram;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;
import picocli.CommandLine;

@Command(name = "raw-latency", mixinStandardHelpOptions = true, sortOptions = false, usageHelpAutoWidth = true,
        description = {
            "Raw baseline of 'latency': a bare SocketChannel ping-pong.",
            "Runs against 'bench raw-serve', either blocking or busy-polling a non-blocking socket (the server "
                + "then spins too)."})
final class RawLatencyCommand implements Callable<Integer> {
    static final String TRANSPORT = "raw-nio";

    /** How the raw client (and its server) wait for the echo. */
    enum Mode {
        BLOCKING("blocking"), BUSY_POLL("busy-poll");

        final String label;

        Mode(String label) {
            this.label = label;
        }
    }

    static final class ModeConverter implements CommandLine.ITypeConverter<Mode> {
        @Override
        public Mode convert(String value) {
            for (Mode m : Mode.values()) {
                if (m.label.equals(value)) {
                    return m;
                }
            }
            throw new CommandLine.TypeConversionException("unknown mode '" + value
                    + "': expected blocking or busy-poll");
        }
    }

    @ParentCommand
    BenchCommand bench;

    @Spec
    CommandSpec spec;

    @Option(names = {"-m", "--mode"}, paramLabel = "MODE", defaultValue = "blocking",
            converter = ModeConverter.class, description = "blocking or busy-poll (default: ${DEFAULT-VALUE})")
    Mode mode;

    @Mixin
    Options.Latency latency;

    @Mixin
    Options.Output output;

    @Override
    public Integer call() throws Exception {
        latency.validate(spec);
        InetSocketAddress address = Options.rawAddress(spec, bench.endpoint());
        AllocationMeter meter = AllocationMeter.create();
        RawProtocol.Kind kind = mode == Mode.BLOCKING ? RawProtocol.Kind.ECHO_BLOCKING
                : RawProtocol.Kind.ECHO_BUSY_POLL;
        try (RawClient client = RawClient.connect(address, kind, 0)) {
            int size = (int) latency.size;
            RoundTrip rt = mode == Mode.BLOCKING ? client.blockingRoundTrip(size) : client.busyPollRoundTrip(size);
            Histogram histogram = Runs.newHistogram();
            long allocated;
            try (Progress progress = output.progress("raw-latency", latency.warmup + latency.iterations,
                    "round trips")) {
                allocated = Runs.latency(rt, latency.warmup, latency.iterations, histogram, progress, meter);
            }
            LatencyResult result = LatencyResult.of(TRANSPORT, mode.label, "tcp://" + address.getHostString()
                    + ":" + address.getPort(), latency.size, latency.warmup, histogram, allocated);
            output.print(spec, result, result.describe());
        }
        return 0;
    }
}
