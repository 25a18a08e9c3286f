package io.rdmacomm.kvstore.cli;

import io.rdmacomm.cli.Cli;
import io.rdmacomm.kvstore.KvClient;
import io.rdmacomm.kvstore.KvControlClient;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** The {@code kv-client} command line: global options, then one subcommand. */
@Command(name = "kv-client", mixinStandardHelpOptions = true, version = "kv-client 0.1.0", sortOptions = false,
        description = "Talks to a kv-server: put, get and delete move values over its data plane, stats asks its"
                + " control plane, bench measures.",
        subcommands = {PutCommand.class, GetCommand.class, DeleteCommand.class, StatsCommand.class,
            BenchCommand.class})
public final class KvClientMain implements Runnable {

    @Option(names = {"-s", "--server"}, paramLabel = "ADDRESS", defaultValue = "127.0.0.1:50051",
            description = "the kv-server's control plane: HOST:PORT, or the rdma:// or tcp:// URI it listens on"
                    + " (kv-server --listen) (default: ${DEFAULT-VALUE})")
    String server;

    @Option(names = {"-b", "--buffer"}, paramLabel = "SIZE", defaultValue = "64m", converter = Cli.SizeConverter.class,
            description = "registered buffer: the largest value this client can put or get (default: ${DEFAULT-VALUE})")
    long buffer;

    @Option(names = "--busy-poll", paramLabel = "DURATION", converter = Cli.DurationConverter.class,
            description = "how long the data connection spins for a reply before it parks (tcp:// and rdma://;"
                    + " default: the transport's)")
    Duration busyPoll;

    @Option(names = "--timeout", paramLabel = "DURATION", defaultValue = "30s", converter = Cli.DurationConverter.class,
            description = "bound on every call to the server (default: ${DEFAULT-VALUE})")
    Duration timeout;

    @Option(names = {"-v", "--verbose"}, description = "log on stderr; print stack traces of errors")
    boolean verbose;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    private final OutputStream rawOut;

    KvClientMain(OutputStream rawOut) {
        this.rawOut = rawOut;
    }

    public static void main(String[] args) {
        System.exit(execute(args, System.out, System.err));
    }

    /** Runs the command line with the given standard output and error, and returns the exit code. */
    static int execute(String[] args, PrintStream out, PrintStream err) {
        Cli.configureLogging(args);
        KvClientMain main = new KvClientMain(out);
        CommandLine cl = Cli.withErrorReporting(new CommandLine(main), "kv-client", () -> main.verbose);
        cl.setOut(new PrintWriter(out, true, StandardCharsets.UTF_8));
        cl.setErr(new PrintWriter(err, true, StandardCharsets.UTF_8));
        return cl.execute(args);
    }

    @Override
    public void run() {
        throw new CommandLine.ParameterException(spec.commandLine(), "missing subcommand: one of "
                + spec.subcommands().keySet());
    }

    /** Standard output as bytes, for values. */
    OutputStream rawOut() {
        return rawOut;
    }

    KvClient.Options options(String name) {
        try {
            KvClient.Options o = KvClient.Options.defaults().withBuffer(buffer).withName(name)
                    .withBusyPoll(busyPoll);
            return new KvClient.Options(o.bufferBytes(), o.clientName(), o.busyPoll(), timeout);
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
        }
    }

    /** A session with the server: control and data plane. */
    KvClient connect(String name) throws IOException {
        return KvClient.connect(server, options(name));
    }

    /** The control plane alone. */
    KvControlClient control() {
        try {
            return KvControlClient.connect(server, timeout);
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
        }
    }
}
