package io.rdmacomm.bench;

import io.rdmacomm.api.Endpoint;
import io.rdmacomm.api.EndpointOption;
import io.rdmacomm.api.Units;
import io.rdmacomm.cli.Cli;
import io.rdmacomm.clientcomm.bench.BandwidthHarness;
import io.rdmacomm.clientcomm.bench.BulkSender;
import io.rdmacomm.clientcomm.bench.LatencyHarness;
import io.rdmacomm.clientcomm.bench.Measured;
import io.rdmacomm.clientcomm.bench.Options;
import io.rdmacomm.clientcomm.bench.RoundTrip;
import java.io.IOException;
import java.time.Duration;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.ArgSpec;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.Option;

/**
 * The raw JUCX baseline of the {@code rdma://} rows: what a hand-written JUCX program achieves with no rdmacomm code
 * in the data path ({@link RawUcxClient} against {@link RawUcxServer}, see {@link RawUcx}); tagged echo and sink as
 * ours' latency and bandwidth, and put + flush, the path rdma:// writes take on shared memory. Every command takes
 * an {@code rdma://host:port} endpoint with no option but {@code connectTimeout}; {@code UCX_TLS} chooses the UCX
 * transport.
 */
final class JucxBaseline {
    static final String TRANSPORT = "raw-jucx";
    static final String MODE = "busy-poll";

    private JucxBaseline() {
    }

    private static Duration timeout(Endpoint endpoint) {
        return endpoint.duration(EndpointOption.CONNECT_TIMEOUT);
    }

    @Command(name = "raw-ucx-serve", mixinStandardHelpOptions = true, usageHelpAutoWidth = true,
            description = {
                "Server of the raw JUCX baselines: echo, sink and put targets over UCX.",
                "One UCP context and worker, busy-polled while a client is connected; clients are served one at a "
                    + "time. Takes an rdma://host:port endpoint (port 0 picks one); UCX_TLS chooses the transport. "
                    + "Prints 'listening rdma://host:port' on stdout once it accepts connections; runs until SIGINT "
                    + "or SIGTERM."})
    static final class Serve extends ServeHarness {
        @Override
        Server start(Endpoint endpoint) throws IOException {
            // the worker belongs to this thread: it listens, serves and closes; SIGTERM only asks it to stop
            return RawUcxServer.listen(Options.rawUcxAddress(spec, endpoint), System.err);
        }
    }

    @Command(name = "raw-ucx-latency", mixinStandardHelpOptions = true, sortOptions = false,
            usageHelpAutoWidth = true,
            description = {
                "Raw JUCX baseline of 'latency' on rdma://: a tagged ping-pong.",
                "Runs against 'raw-ucx-serve' with JUCX alone: one context and worker, the pong's receive posted "
                    + "before the ping is sent, both awaited by busy-polling the worker (the server spins too)."})
    static final class Latency extends LatencyHarness {
        @Override
        protected Measured<RawUcxClient.Echo> connect(Endpoint endpoint, int size) throws IOException {
            RawUcxClient client = RawUcxClient.connect(Options.rawUcxAddress(spec, endpoint), RawUcx.KIND_ECHO,
                    size, 0, timeout(endpoint));
            return new Measured<>(client.roundTrip(size), TRANSPORT, MODE, endpoint.toString(), client);
        }
    }

    @Command(name = "raw-ucx-bandwidth", mixinStandardHelpOptions = true, sortOptions = false,
            usageHelpAutoWidth = true,
            description = {
                "Raw JUCX baseline of 'bandwidth' on rdma://: tagged sends into a sink.",
                "Sends SIZE bytes per tagged message straight from one direct buffer, up to 16 in flight, into "
                    + "'raw-ucx-serve', which keeps 16 receives posted and acknowledges the count with an 8-byte "
                    + "message; timed from the first send to that acknowledgement."})
    static final class Bandwidth extends BandwidthHarness {
        @Override
        protected Measured<BulkSender> connect(Endpoint endpoint, int size, long total) throws IOException {
            RawUcxClient client = RawUcxClient.connect(Options.rawUcxAddress(spec, endpoint), RawUcx.KIND_SINK,
                    size, total, timeout(endpoint));
            return new Measured<>(client.sender(), TRANSPORT, MODE, endpoint.toString(), client);
        }
    }

    /** {@code --target-memory}: where the server's region of a put run lives. */
    static final class Target {
        @Option(names = "--target-memory", paramLabel = "MEMORY", defaultValue = "ucx",
                converter = RawUcx.TargetMemoryConverter.class,
                description = "the server's region: ucx (allocated by UCX, as rdma:// allocates its rings) or "
                    + "mapped (a direct buffer registered with ucp_mem_map) (default: ${DEFAULT-VALUE})")
        RawUcx.TargetMemory memory;
    }

    @Command(name = "raw-ucx-put-bandwidth", mixinStandardHelpOptions = true, sortOptions = false,
            usageHelpAutoWidth = true,
            description = {
                "Raw JUCX put bandwidth on rdma://: put + flush into a region of the server.",
                "Puts SIZE bytes at a time straight from one direct buffer into a SIZE-byte region 'raw-ucx-serve' "
                    + "maps for the run, each put followed by a flush (completed once the bytes are placed); timed "
                    + "from the first put to the last flush. The server progresses its worker throughout."})
    static final class PutBandwidth extends BandwidthHarness {
        @CommandLine.Mixin
        Target target;

        @Override
        protected Measured<BulkSender> connect(Endpoint endpoint, int size, long total) throws IOException {
            RawUcxClient client = RawUcxClient.connect(Options.rawUcxAddress(spec, endpoint), RawUcx.KIND_PUT,
                    size, total, target.memory, timeout(endpoint));
            return new Measured<>(client.putSender(), TRANSPORT, "put-flush/" + target.memory.label() + "-memory",
                    endpoint.toString(), client);
        }
    }

    @Command(name = "raw-ucx-put-latency", mixinStandardHelpOptions = true, sortOptions = false,
            usageHelpAutoWidth = true,
            description = {
                "Raw JUCX put latency on rdma://: put + flush of SIZE bytes into a region of the server.",
                "Each round trip puts SIZE bytes into a SIZE-byte region 'raw-ucx-serve' maps for the run and waits "
                    + "for the flush, which completes once they are placed there. The server progresses its worker "
                    + "throughout."})
    static final class PutLatency extends LatencyHarness {
        @CommandLine.Mixin
        Target target;

        @Override
        protected Measured<RoundTrip> connect(Endpoint endpoint, int size) throws IOException {
            RawUcxClient client = RawUcxClient.connect(Options.rawUcxAddress(spec, endpoint), RawUcx.KIND_PUT,
                    size, size, target.memory, timeout(endpoint));
            return new Measured<>(client.putRoundTrip(size), TRANSPORT, "put-flush/" + target.memory.label()
                    + "-memory", endpoint.toString(), client);
        }
    }

    @Command(name = "raw-ucx-idle-put", mixinStandardHelpOptions = true, sortOptions = false,
            usageHelpAutoWidth = true, defaultValueProvider = IdlePut.FewRoundTrips.class,
            description = {
                "Raw JUCX put + flush into a server that does not progress its worker.",
                "Each round trip puts SIZE bytes into the server's region and waits for the flush, then tells the "
                    + "server over a TCP control connection that it may stay asleep. The server only progresses "
                    + "after hearing nothing for --idle-for: a round trip near that time means the put into that "
                    + "memory needs the target's progress, a round trip of microseconds that it does not."})
    static final class IdlePut extends LatencyHarness {
        @CommandLine.Mixin
        Target target;

        @Option(names = "--idle-for", paramLabel = "DURATION", defaultValue = "100ms",
                converter = Cli.DurationConverter.class,
                description = "how long the server waits without progress before it progresses (1ms to 60s; "
                    + "default: ${DEFAULT-VALUE})")
        Duration idleFor;

        /** Few round trips by default: each may take --idle-for. */
        static final class FewRoundTrips implements CommandLine.IDefaultValueProvider {
            @Override
            public String defaultValue(ArgSpec arg) {
                if (!(arg instanceof OptionSpec option)) {
                    return null;
                }
                return switch (option.longestName()) {
                    case "--iterations" -> "20";
                    case "--warmup" -> "5";
                    default -> null;
                };
            }
        }

        @Override
        protected Measured<RoundTrip> connect(Endpoint endpoint, int size) throws IOException {
            long idleMillis = idleFor.toMillis();
            Options.check(spec, idleMillis >= 1 && idleMillis <= RawUcxServer.MAX_IDLE_MILLIS, "--idle-for must be"
                    + " between 1ms and " + RawUcxServer.MAX_IDLE_MILLIS / 1000 + "s, got "
                    + Units.formatDuration(idleFor));
            RawUcxClient client = RawUcxClient.connect(Options.rawUcxAddress(spec, endpoint),
                    RawUcx.KIND_IDLE_PUT, size, idleMillis, target.memory, timeout(endpoint));
            return new Measured<>(client.putRoundTrip(size), TRANSPORT, "idle-put/" + target.memory.label() + "-memory",
                    endpoint.toString(), client);
        }
    }
}
