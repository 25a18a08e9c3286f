package io.rdmacomm.bench;

import io.rdmacomm.api.Endpoint;
import java.io.PrintWriter;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import picocli.CommandLine;

/**
 * {@code clientcomm bench}: the benchmark commands. Registered as a subcommand of {@code clientcomm}, it takes
 * the endpoint from {@code clientcomm --endpoint}; run on its own ({@link #main}) it takes its own
 * {@code --endpoint}.
 */
@Command(name = "bench", mixinStandardHelpOptions = true, sortOptions = false, usageHelpAutoWidth = true,
        description = {
            "Benchmarks against servercomm, and the raw baselines they are compared with.",
            "latency uses servercomm's ECHO session, bandwidth its SINK session; raw-serve, raw-latency and "
                + "raw-bandwidth are the same tests over bare Java NIO SocketChannels (tcp://), raw-ucx-serve, "
                + "raw-ucx-latency and raw-ucx-bandwidth over JUCX alone (rdma://). bench/compare runs ours and "
                + "the baselines back to back and prints ratios."},
        subcommands = {LatencyCommand.class, BandwidthCommand.class, RawServeCommand.class,
            RawLatencyCommand.class, RawBandwidthCommand.class, RawUcxServeCommand.class,
            RawUcxLatencyCommand.class, RawUcxBandwidthCommand.class})
public final class BenchCommand {
    @Spec
    CommandSpec spec;

    @Option(names = {"-e", "--endpoint"}, paramLabel = "URI",
            description = "endpoint to measure (default: the --endpoint given to clientcomm)")
    String endpoint;

    /** Runs {@code bench} on its own: {@code java -cp ... io.rdmacomm.bench.BenchCommand --help}. */
    public static void main(String[] args) {
        System.exit(execute(args));
    }

    static int execute(String[] args) {
        return commandLine().execute(args);
    }

    /** {@code bench} as a command line of its own, with one-line errors (2 for bad arguments, 1 for failures). */
    static CommandLine commandLine() {
        CommandLine cl = new CommandLine(new BenchCommand());
        cl.setParameterExceptionHandler((e, a) -> {
            e.getCommandLine().getErr().println("bench: " + e.getMessage() + " (see --help)");
            return 2;
        });
        cl.setExecutionExceptionHandler((e, c, r) -> {
            PrintWriter err = c.getErr();
            err.println("bench: " + describe(e));
            err.flush();
            return 1;
        });
        return cl;
    }

    static String describe(Throwable e) {
        String m = e.getMessage();
        return m == null || m.isBlank() ? e.getClass().getSimpleName() : m;
    }

    /**
     * The endpoint to measure: this command's {@code --endpoint}, else the parent command's.
     *
     * @throws CommandLine.ParameterException if neither names one, or it does not parse
     */
    Endpoint endpoint() {
        Object value = endpoint;
        CommandSpec parent = spec.parent();
        if (value == null && parent != null) {
            OptionSpec option = parent.findOption("--endpoint");
            value = option == null ? null : option.getValue();
        }
        if (value == null) {
            throw new CommandLine.ParameterException(spec.commandLine(), "no endpoint: give --endpoint URI");
        }
        if (value instanceof Endpoint e) {
            return e;
        }
        try {
            return Endpoint.parse(value.toString());
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
        }
    }
}
