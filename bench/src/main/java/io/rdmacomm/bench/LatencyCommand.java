package io.rdmacomm.bench;

import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.CommunicatorException;
import io.rdmacomm.api.Communicators;
import io.rdmacomm.api.Endpoint;
import io.rdmacomm.session.SessionClient;
import io.rdmacomm.session.SessionRequest;
import java.util.concurrent.Callable;
import org.HdrHistogram.Histogram;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

@Command(name = "latency", mixinStandardHelpOptions = true, sortOptions = false, usageHelpAutoWidth = true,
        description = {
            "Round-trip latency percentiles against servercomm's ECHO session.",
            "Writes SIZE bytes, syncs, reads them back. Prints round-trip p50, p90, p99, p99.9 and max in "
                + "microseconds and the bytes allocated per round trip in steady state. Add ?busyPoll=10ms to "
                + "the endpoint (of client and server) to spin instead of sleeping in reads."})
final class LatencyCommand implements Callable<Integer> {
    @ParentCommand
    BenchCommand bench;

    @Spec
    CommandSpec spec;

    @Mixin
    Options.Latency latency;

    @Mixin
    Options.Output output;

    @Override
    public Integer call() throws Exception {
        latency.validate(spec);
        Endpoint endpoint = bench.endpoint();
        AllocationMeter meter = AllocationMeter.create();
        try (Communicator peer = Communicators.open(endpoint)) {
            peer.connect();
            SessionClient.open(peer, SessionRequest.echo());
            CommunicatorRoundTrip rt = new CommunicatorRoundTrip(peer, (int) latency.size);
            rt.roundTrip();
            if (!rt.lastEchoMatches()) {
                throw new CommunicatorException("the echo from " + peer.peerName() + " differs from the "
                        + latency.size + " bytes sent");
            }
            Histogram histogram = Runs.newHistogram();
            long allocated;
            try (Progress progress = output.progress("latency", latency.warmup + latency.iterations,
                    "round trips")) {
                allocated = Runs.latency(rt, latency.warmup, latency.iterations, histogram, progress, meter);
            }
            LatencyResult result = LatencyResult.of(endpoint.scheme(), Options.mode(endpoint), endpoint.toString(),
                    latency.size, latency.warmup, histogram, allocated);
            output.print(spec, result, result.describe());
        }
        return 0;
    }
}
