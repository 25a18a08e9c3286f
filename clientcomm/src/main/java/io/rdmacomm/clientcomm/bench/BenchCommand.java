package io.rdmacomm.clientcomm.bench;

import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.Communicators;
import io.rdmacomm.api.Endpoint;
import io.rdmacomm.api.EndpointOption;
import io.rdmacomm.cli.Cli;
import io.rdmacomm.rdma.RdmaCommunicator;
import io.rdmacomm.session.SessionClient;
import io.rdmacomm.session.SessionRequest;
import java.io.IOException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code clientcomm bench}: the benchmarks of our communicators, against servercomm's ECHO and SINK sessions on any
 * endpoint. It takes the endpoint from {@code clientcomm --endpoint} unless given its own. The raw baselines these
 * figures are compared with are not part of the client: they run from {@code io.rdmacomm.bench.BaselineMain} (module
 * {@code bench}, {@code bench/baseline}).
 */
@Command(name = "bench", mixinStandardHelpOptions = true, sortOptions = false, usageHelpAutoWidth = true,
        description = {
            "Benchmarks of our communicators against servercomm.",
            "latency uses servercomm's ECHO session, bandwidth its SINK session, on any endpoint. The raw "
                + "baselines they are compared with (Java NIO, JUCX, ucx_perftest) run from bench/baseline; "
                + "bench/compare runs ours and the baselines back to back and prints ratios."},
        subcommands = {BenchCommand.Latency.class, BenchCommand.Bandwidth.class})
public final class BenchCommand {
    @Option(names = {"-e", "--endpoint"}, paramLabel = "URI", converter = Cli.EndpointConverter.class,
            description = "endpoint to measure (default: the --endpoint given to clientcomm)")
    Endpoint endpoint;

    @Command(name = "latency", mixinStandardHelpOptions = true, sortOptions = false, usageHelpAutoWidth = true,
            description = {
                "Round-trip latency percentiles against servercomm's ECHO session.",
                "Writes SIZE bytes, syncs, reads them back. Prints round-trip p50, p90, p99, p99.9 and max in "
                    + "microseconds and the bytes allocated per round trip in steady state. Add ?busyPoll=10ms to "
                    + "the endpoint (of client and server) to spin instead of sleeping in reads."})
    static final class Latency extends LatencyHarness {
        @Override
        protected Measured<CommunicatorRoundTrip> connect(Endpoint endpoint, int size) throws IOException {
            Communicator peer = Communicators.connect(endpoint.toString());
            return ours(endpoint, peer, SessionRequest.echo(), new CommunicatorRoundTrip(peer, size));
        }
    }

    @Command(name = "bandwidth", mixinStandardHelpOptions = true, sortOptions = false, usageHelpAutoWidth = true,
            description = {
                "Streaming bandwidth into servercomm's SINK session.",
                "Streams BYTES in SIZE-byte writes and prints GB/s (10^9 bytes/s), timed from the first write to "
                    + "the server's acknowledgement of the last byte."})
    static final class Bandwidth extends BandwidthHarness {
        @Option(names = "--sync-every", paramLabel = "N", defaultValue = "0",
                description = "sync() after every N writes, as a sender of messages would (0: only at the end; "
                    + "the JSON's messages_per_s is the write rate) (default: ${DEFAULT-VALUE})")
        long syncEvery;

        @Override
        protected Measured<CommunicatorSender> connect(Endpoint endpoint, int size, long total) throws IOException {
            Options.check(spec, syncEvery >= 0, "--sync-every must not be negative, got " + syncEvery);
            Communicator peer = Communicators.connect(endpoint.toString());
            return ours(endpoint, peer, SessionRequest.sink(total), new CommunicatorSender(peer, syncEvery));
        }
    }

    /**
     * A run of ours on a connected communicator: the harness opens the servercomm session of {@code request}; the
     * result names the endpoint as given: its scheme, busy-polling or not, and every option set; on rdma:// with the
     * provider that actually ran ({@code provider=ucx} stands for ucx-ffm or ucx-jucx).
     */
    private static <T> Measured<T> ours(Endpoint endpoint, Communicator peer, SessionRequest request, T subject) {
        Endpoint measured = peer instanceof RdmaCommunicator r ? endpoint.with(EndpointOption.PROVIDER,
                r.providerName()) : endpoint;
        return new Measured<>(subject, endpoint.scheme(), Options.mode(endpoint), measured.toString(), peer,
                () -> SessionClient.open(peer, request));
    }
}
