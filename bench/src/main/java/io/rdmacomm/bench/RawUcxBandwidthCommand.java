package io.rdmacomm.bench;

import io.rdmacomm.api.Endpoint;
import io.rdmacomm.api.EndpointOption;
import java.net.InetSocketAddress;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

@Command(name = "raw-ucx-bandwidth", mixinStandardHelpOptions = true, sortOptions = false,
        usageHelpAutoWidth = true,
        description = {
            "Raw JUCX baseline of 'bandwidth' on rdma://: tagged sends into a sink.",
            "Sends SIZE bytes per tagged message straight from one direct buffer, up to 16 in flight, into "
                + "'bench raw-ucx-serve', which keeps 16 receives posted and acknowledges the count with an 8-byte "
                + "message; timed from the first send to that acknowledgement. UCX_TLS chooses the transport."})
final class RawUcxBandwidthCommand implements Callable<Integer> {
    @ParentCommand
    BenchCommand bench;

    @Spec
    CommandSpec spec;

    @Mixin
    Options.Bandwidth bandwidth;

    @Mixin
    Options.Output output;

    @Override
    public Integer call() throws Exception {
        bandwidth.validate(spec);
        Endpoint endpoint = bench.endpoint();
        InetSocketAddress address = Options.rawUcxAddress(spec, endpoint);
        try (RawUcxClient client = RawUcxClient.connect(address, RawUcx.KIND_SINK, (int) bandwidth.size,
                bandwidth.total, endpoint.duration(EndpointOption.CONNECT_TIMEOUT))) {
            long nanos;
            try (Progress progress = output.progress("raw-ucx-bandwidth", bandwidth.total, "bytes")) {
                nanos = Runs.bandwidth(client.sender(), Messages.pattern((int) bandwidth.size), bandwidth.total,
                        progress);
            }
            BandwidthResult result = BandwidthResult.of(RawUcxLatencyCommand.TRANSPORT, RawUcxLatencyCommand.MODE,
                    endpoint.toString(), bandwidth.size, bandwidth.total, nanos);
            output.print(spec, result, result.describe());
        }
        return 0;
    }
}
