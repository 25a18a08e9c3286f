package io.rdmacomm.bench;

import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.Communicators;
import io.rdmacomm.api.Endpoint;
import io.rdmacomm.session.SessionClient;
import io.rdmacomm.session.SessionRequest;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

@Command(name = "bandwidth", mixinStandardHelpOptions = true, sortOptions = false, usageHelpAutoWidth = true,
        description = {
            "Streaming bandwidth into servercomm's SINK session.",
            "Streams BYTES in SIZE-byte writes and prints GB/s (10^9 bytes/s), timed from the first write to "
                + "the server's acknowledgement of the last byte."})
final class BandwidthCommand implements Callable<Integer> {
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
        try (Communicator peer = Communicators.open(endpoint)) {
            peer.connect();
            SessionClient.open(peer, SessionRequest.sink(bandwidth.total));
            long nanos;
            try (Progress progress = output.progress("bandwidth", bandwidth.total, "bytes")) {
                nanos = Runs.bandwidth(new CommunicatorSender(peer), Messages.pattern((int) bandwidth.size),
                        bandwidth.total, progress);
            }
            BandwidthResult result = BandwidthResult.of(endpoint.scheme(), Options.mode(endpoint),
                    endpoint.toString(), bandwidth.size, bandwidth.total, nanos);
            output.print(spec, result, result.describe());
        }
        return 0;
    }
}
