package io.rdmacomm.bench;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

@Command(name = "raw-serve", mixinStandardHelpOptions = true, usageHelpAutoWidth = true,
        description = {
            "Server of the raw baselines: echo and sink over bare SocketChannels.",
            "Prints 'listening tcp://host:port' on stdout once it accepts connections; runs until SIGINT or "
                + "SIGTERM."})
final class RawServeCommand implements Callable<Integer> {
    @ParentCommand
    BenchCommand bench;

    @Spec
    CommandSpec spec;

    @Option(names = "--sink-buffer", paramLabel = "SIZE", defaultValue = "64k",
            converter = Options.SizeConverter.class,
            description = "bytes a sink reads at most per call (default: ${DEFAULT-VALUE})")
    long sinkBuffer;

    @Override
    public Integer call() throws Exception {
        Options.checkSize(spec, "--sink-buffer", sinkBuffer);
        InetSocketAddress address = Options.rawAddress(spec, bench.endpoint());
        RawServer server = RawServer.start(address, System.err, (int) sinkBuffer);
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                server.close();
            } catch (IOException e) {
                System.err.println("raw-serve: closing failed: " + e.getMessage());
            } finally {
                stopped.countDown();
            }
        }, "rdmacomm-bench-raw-shutdown"));
        InetSocketAddress bound = server.address();
        spec.commandLine().getOut().println("listening tcp://" + bound.getHostString() + ":" + bound.getPort());
        spec.commandLine().getOut().flush();
        stopped.await();
        return 0;
    }
}
