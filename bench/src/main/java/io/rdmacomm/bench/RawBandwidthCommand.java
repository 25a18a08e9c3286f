package io.rdmacomm.bench;

import java.net.InetSocketAddress;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

@Command(name = "raw-bandwidth", mixinStandardHelpOptions = true, sortOptions = false, usageHelpAutoWidth = true,
        description = {
            "Raw baseline of 'bandwidth': blocking SocketChannel writes.",
            "Writes SIZE bytes at a time straight from one direct buffer into 'bench raw-serve', which reads "
                + "into a direct buffer (its --sink-buffer) and acknowledges the count."})
final class RawBandwidthCommand implements Callable<Integer> {
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
        InetSocketAddress address = Options.rawAddress(spec, bench.endpoint());
        try (RawClient client = RawClient.connect(address, RawProtocol.Kind.SINK, bandwidth.total)) {
            long nanos;
            try (Progress progress = output.progress("raw-bandwidth", bandwidth.total, "bytes")) {
                nanos = Runs.bandwidth(client.sender(), Messages.pattern((int) bandwidth.size), bandwidth.total,
                        progress);
            }
            BandwidthResult result = BandwidthResult.of(RawLatencyCommand.TRANSPORT, "blocking", "tcp://"
                    + address.getHostString() + ":" + address.getPort(), bandwidth.size, bandwidth.total, nanos);
            output.print(spec, result, result.describe());
        }
        return 0;
    }
}
