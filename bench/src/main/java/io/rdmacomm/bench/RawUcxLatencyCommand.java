package io.rdmacomm.bench;

import io.rdmacomm.api.CommunicatorException;
import io.rdmacomm.api.Endpoint;
import io.rdmacomm.api.EndpointOption;
import java.net.InetSocketAddress;
import java.util.concurrent.Callable;
import org.HdrHistogram.Histogram;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

@Command(name = "raw-ucx-latency", mixinStandardHelpOptions = true, sortOptions = false, usageHelpAutoWidth = true,
        description = {
            "Raw JUCX baseline of 'latency' on rdma://: a tagged ping-pong.",
            "Runs against 'bench raw-ucx-serve' with JUCX alone: one context and worker, the pong's receive posted "
                + "before the ping is sent, both awaited by busy-polling the worker (the server spins too). "
                + "UCX_TLS chooses the transport."})
final class RawUcxLatencyCommand implements Callable<Integer> {
    static final String TRANSPORT = "raw-jucx";
    static final String MODE = "busy-poll";

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
        InetSocketAddress address = Options.rawUcxAddress(spec, endpoint);
        AllocationMeter meter = AllocationMeter.create();
        int size = (int) latency.size;
        try (RawUcxClient client = RawUcxClient.connect(address, RawUcx.KIND_ECHO, size, 0,
                endpoint.duration(EndpointOption.CONNECT_TIMEOUT))) {
            RawUcxClient.Echo rt = client.roundTrip(size);
            rt.roundTrip();
            if (!rt.lastEchoMatches()) {
                throw new CommunicatorException("the echo from " + endpoint.authority() + " differs from the "
                        + size + " bytes sent");
            }
            Histogram histogram = Runs.newHistogram();
            long allocated;
            try (Progress progress = output.progress("raw-ucx-latency", latency.warmup + latency.iterations,
                    "round trips")) {
                allocated = Runs.latency(rt, latency.warmup, latency.iterations, histogram, progress, meter);
            }
            LatencyResult result = LatencyResult.of(TRANSPORT, MODE, endpoint.toString(), latency.size,
                    latency.warmup, histogram, allocated);
            output.print(spec, result, result.describe());
        }
        return 0;
    }
}
