package io.rdmacomm.bench;

import io.rdmacomm.api.Endpoint;
import io.rdmacomm.cli.Cli;
import io.rdmacomm.clientcomm.bench.BandwidthHarness;
import io.rdmacomm.clientcomm.bench.BulkSender;
import io.rdmacomm.clientcomm.bench.EchoRoundTrip;
import io.rdmacomm.clientcomm.bench.LatencyHarness;
import io.rdmacomm.clientcomm.bench.Measured;
import io.rdmacomm.clientcomm.bench.Options;
import java.io.IOException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * The raw Java NIO baseline of the {@code tcp://} rows: the same tests as ours over bare {@code SocketChannel}s with
 * {@code TCP_NODELAY} ({@link RawClient} against {@link RawServer}, greeting with {@link RawProtocol}), the least a
 * hand-written Java socket program does.
 */
final class NioBaseline {
    static final String TRANSPORT = "raw-nio";

    private NioBaseline() {
    }

    /** How the raw client (and its server) wait for the echo. */
    enum Mode implements Options.Labelled {
        BLOCKING("blocking", RawProtocol.Kind.ECHO_BLOCKING), BUSY_POLL("busy-poll", RawProtocol.Kind.ECHO_BUSY_POLL);

        private final String label;
        final RawProtocol.Kind kind;

        Mode(String label, RawProtocol.Kind kind) {
            this.label = label;
            this.kind = kind;
        }

        @Override
        public String label() {
            return label;
        }
    }

    static final class ModeConverter extends Options.LabelConverter<Mode> {
        ModeConverter() {
            super(Mode.class, "mode");
        }
    }

    /** The endpoint as the raw results name it: the socket address alone (the raw baseline takes no options). */
    private static String endpoint(Endpoint endpoint) {
        return "tcp://" + endpoint.authority();
    }

    @Command(name = "raw-serve", mixinStandardHelpOptions = true, usageHelpAutoWidth = true,
            description = {
                "Server of the raw baselines: echo and sink over bare SocketChannels.",
                "Prints 'listening tcp://host:port' on stdout once it accepts connections; runs until SIGINT or "
                    + "SIGTERM."})
    static final class Serve extends ServeHarness {
        @Option(names = "--sink-buffer", paramLabel = "SIZE", defaultValue = "64k",
                converter = Cli.SizeConverter.class,
                description = "bytes a sink reads at most per call (default: ${DEFAULT-VALUE})")
        long sinkBuffer;

        @Override
        Server start(Endpoint endpoint) throws IOException {
            Options.checkSize(spec, "--sink-buffer", sinkBuffer);
            return RawServer.start(Options.rawAddress(spec, endpoint), System.err, (int) sinkBuffer);
        }
    }

    @Command(name = "raw-latency", mixinStandardHelpOptions = true, sortOptions = false, usageHelpAutoWidth = true,
            description = {
                "Raw baseline of 'latency': a bare SocketChannel ping-pong.",
                "Runs against 'raw-serve', either blocking or busy-polling a non-blocking socket (the server then "
                    + "spins too)."})
    static final class Latency extends LatencyHarness {
        @Option(names = {"-m", "--mode"}, paramLabel = "MODE", defaultValue = "blocking",
                converter = ModeConverter.class, description = "blocking or busy-poll (default: ${DEFAULT-VALUE})")
        Mode mode;

        @Override
        protected Measured<EchoRoundTrip> connect(Endpoint endpoint, int size) throws IOException {
            RawClient client = RawClient.connect(Options.rawAddress(spec, endpoint), mode.kind, 0);
            EchoRoundTrip rt = mode == Mode.BLOCKING ? client.blockingRoundTrip(size) : client.busyPollRoundTrip(size);
            return new Measured<>(rt, TRANSPORT, mode.label, endpoint(endpoint), client);
        }
    }

    @Command(name = "raw-bandwidth", mixinStandardHelpOptions = true, sortOptions = false,
            usageHelpAutoWidth = true,
            description = {
                "Raw baseline of 'bandwidth': blocking SocketChannel writes.",
                "Writes SIZE bytes at a time straight from one direct buffer into 'raw-serve', which reads into a "
                    + "direct buffer (its --sink-buffer) and acknowledges the count."})
    static final class Bandwidth extends BandwidthHarness {
        @Override
        protected Measured<BulkSender> connect(Endpoint endpoint, int size, long total) throws IOException {
            RawClient client = RawClient.connect(Options.rawAddress(spec, endpoint), RawProtocol.Kind.SINK, total);
            return new Measured<>(client.sender(), TRANSPORT, Mode.BLOCKING.label, endpoint(endpoint), client);
        }
    }
}
