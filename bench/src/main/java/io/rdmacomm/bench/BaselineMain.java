package io.rdmacomm.bench;

import io.rdmacomm.api.Endpoint;
import io.rdmacomm.cli.Cli;
import io.rdmacomm.clientcomm.bench.BenchCommand;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * The raw baselines' entry point ({@code bench/baseline}, run by {@code bench/compare}): the servers and clients
 * our communicators are compared with, kept out of {@code clientcomm}, which offers only the benchmarks of our
 * communicators ({@link BenchCommand}). Java NIO sockets for {@code tcp://} ({@link NioBaseline}) and JUCX alone for
 * {@code rdma://} ({@link JucxBaseline}); their JSON results have the fields of ours.
 */
@Command(name = "baseline", mixinStandardHelpOptions = true, version = "baseline 0.1.0", sortOptions = false,
        usageHelpAutoWidth = true,
        description = {
            "The raw baselines bench/compare measures our communicators against.",
            "raw-serve, raw-latency and raw-bandwidth are the tests of 'clientcomm bench' over bare Java NIO "
                + "SocketChannels (tcp://); raw-ucx-serve, raw-ucx-latency and raw-ucx-bandwidth the same over JUCX "
                + "alone (rdma://); raw-ucx-put-bandwidth, raw-ucx-put-latency and raw-ucx-idle-put time JUCX's "
                + "put + flush; aeron-pong and aeron-latency are an Aeron IPC ping-pong (the Java same-host anchor); "
                + "memcpy the copy ceiling of one thread; core-to-core what the machine does between two cores."},
        subcommands = {NioBaseline.Serve.class, NioBaseline.Latency.class, NioBaseline.Bandwidth.class,
            JucxBaseline.Serve.class, JucxBaseline.Latency.class, JucxBaseline.Bandwidth.class,
            JucxBaseline.PutBandwidth.class, JucxBaseline.PutLatency.class, JucxBaseline.IdlePut.class,
            AeronBaseline.Pong.class, AeronBaseline.Latency.class, AeronBaseline.Throughput.class, MemcpyBaseline.class,
            CoreToCore.class})
public final class BaselineMain {
    @Option(names = {"-e", "--endpoint"}, paramLabel = "URI", converter = Cli.EndpointConverter.class,
            description = "endpoint to serve or measure: tcp://host:port for raw-*, rdma://host:port for raw-ucx-*")
    Endpoint endpoint;

    @Option(names = {"-v", "--verbose"}, description = "print stack traces of errors")
    boolean verbose;

    public static void main(String[] args) {
        System.exit(commandLine().execute(args));
    }

    /** The command line with the binaries' error reporting (exit 2 for bad arguments, 1 for failures). */
    static CommandLine commandLine() {
        BaselineMain main = new BaselineMain();
        return Cli.withErrorReporting(new CommandLine(main), "baseline", () -> main.verbose);
    }
}
