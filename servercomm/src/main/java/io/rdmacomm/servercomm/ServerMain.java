package io.rdmacomm.servercomm;

import io.rdmacomm.api.Endpoint;
import io.rdmacomm.cli.Cli;
import io.rdmacomm.cli.SecretOptions;
import io.rdmacomm.cli.ServerLimits;
import io.rdmacomm.gvirtus.GVirtuSLimits;
import io.rdmacomm.session.ExchangeSettings;
import io.rdmacomm.session.SessionProtocol;
import io.rdmacomm.session.SessionServer;
import io.rdmacomm.session.routine.RoutineRegistry;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.concurrent.Callable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine;

/** The {@code servercomm} command line. */
@Command(name = "servercomm", mixinStandardHelpOptions = true, version = "servercomm 0.1.0",
        sortOptions = false,
        description = {
            "Serves clientcomm sessions on one endpoint, many clients at once, until SIGINT or SIGTERM:"
                + " ECHO, SINK, SEND, WRITE, READ, CALL, ALLTOALL and BROADCAST (see docs/tools.md).",
            "With --protocol gvirtus it is a GVirtuS backend instead: routines echo, sleep, fail and"
                + " cudaGetDeviceCount and those of GVirtuSRoutine plugins on its class path, for GVirtuS frontends"
                + " (real ones on 'tcp://HOST:PORT?wire=raw') and clientcomm gvirtus.",
            "Prints 'listening <endpoint>' on stdout once it accepts connections."})
public final class ServerMain implements Callable<Integer> {
    private static final String SESSION = "session";
    private static final String GVIRTUS = "gvirtus";
    private static final String[] SESSION_ONLY = {"--request-timeout", "--region-size", "--max-group-size",
        "--group-timeout", "--idle-timeout", "--max-call-input", "--routine-timeout", "--secret-file", "--secret-env"};
    private static final Duration STOP_TIMEOUT = Duration.ofSeconds(10);

    @Option(names = {"-e", "--endpoint"}, paramLabel = "URI", defaultValue = Cli.DEFAULT_ENDPOINT,
            converter = Cli.EndpointConverter.class,
            description = "endpoint to listen on; port 0 picks a free port (default: ${DEFAULT-VALUE})")
    private Endpoint endpoint;

    @Option(names = "--protocol", paramLabel = "PROTOCOL", defaultValue = SESSION,
            description = SESSION + " (clientcomm's exercises) or " + GVIRTUS + " (a GVirtuS backend)"
                    + " (default: ${DEFAULT-VALUE})")
    private String protocol;

    @Option(names = "--max-sessions", paramLabel = "N", defaultValue = "10000",
            description = "sessions served at once; further clients are refused as busy (session) or closed at once"
                    + " (gvirtus); lowered at start to what the descriptor limit (ulimit -n) holds, which is printed;"
                    + " on rdma:// the endpoint's maxPeers too (default: ${DEFAULT-VALUE})")
    private int maxSessions;

    @Option(names = "--max-input", paramLabel = "SIZE", defaultValue = "256m", converter = Cli.SizeConverter.class,
            description = "gvirtus: the largest request input accepted; a larger one ends that session"
                    + " (default: ${DEFAULT-VALUE})")
    private long maxInput;

    @Option(names = "--request-timeout", paramLabel = "DURATION", defaultValue = "10s",
            converter = Cli.DurationConverter.class,
            description = "how long a client may take to send its session request; 0 waits for ever"
                    + " (default: ${DEFAULT-VALUE})")
    private Duration requestTimeout;

    @Option(names = "--region-size", paramLabel = "SIZE", defaultValue = "1m", converter = Cli.SizeConverter.class,
            description = "bytes of the region each write or read session registers (default: ${DEFAULT-VALUE})")
    private long regionSize;

    @Option(names = "--max-group-size", paramLabel = "N", defaultValue = "64",
            description = "most clients in one alltoall or broadcast group (default: ${DEFAULT-VALUE})")
    private int maxGroupSize;

    @Option(names = "--group-timeout", paramLabel = "DURATION", defaultValue = "30s",
            converter = Cli.DurationConverter.class,
            description = "how long a group may take to gather its members, from the first one's arrival"
                    + " (default: ${DEFAULT-VALUE})")
    private Duration groupTimeout;

    @Option(names = "--idle-timeout", paramLabel = "DURATION", defaultValue = "60s",
            converter = Cli.DurationConverter.class,
            description = "how long a session may keep the server waiting (blocked reading from or writing to its"
                    + " client) before it is closed, noticed within a quarter of it more; 0 waits for ever (default:"
                    + " ${DEFAULT-VALUE})")
    private Duration idleTimeout;

    @Option(names = "--max-call-input", paramLabel = "SIZE", defaultValue = "16m", converter = Cli.SizeConverter.class,
            description = "largest routine input a call may declare, at most 16m (default: ${DEFAULT-VALUE})")
    private long maxCallInput;

    @Option(names = "--routine-timeout", paramLabel = "DURATION", defaultValue = "30s",
            converter = Cli.DurationConverter.class,
            description = "how long a routine may run before it is interrupted and its call fails"
                    + " (default: ${DEFAULT-VALUE})")
    private Duration routineTimeout;

    @Mixin
    private SecretOptions secret;

    @Option(names = {"-v", "--verbose"}, description = "log every session on stderr; print stack traces of errors")
    private boolean verbose;

    @CommandLine.Spec
    private CommandLine.Model.CommandSpec spec;

    private volatile boolean finished;

    public static void main(String[] args) {
        System.exit(execute(args));
    }

    /** Runs the command line and returns the exit code. */
    static int execute(String[] args) {
        return execute(args, new PrintWriter(System.out, true), new PrintWriter(System.err, true));
    }

    /** Runs the command line with the given standard output and error, and returns the exit code. */
    static int execute(String[] args, PrintWriter out, PrintWriter err) {
        Cli.configureLogging(args);
        ServerMain main = new ServerMain();
        CommandLine cl = Cli.withErrorReporting(new CommandLine(main), "servercomm", () -> main.verbose);
        cl.setOut(out);
        cl.setErr(err);
        return cl.execute(args);
    }

    /** The line on what the descriptor limit holds, on stderr, once the server listens (not before a failure). */
    private void announce(ServerLimits fit) {
        spec.commandLine().getErr().println(fit.describe("servercomm", "sessions"));
        spec.commandLine().getErr().flush();
    }

    @Override
    public Integer call() throws Exception {
        CommandLine.ParseResult parsed = spec.commandLine().getParseResult();
        // the options of the other protocol are refused rather than ignored
        if (!protocol.equals(SESSION) && !protocol.equals(GVIRTUS)) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--protocol must be " + SESSION + " or "
                    + GVIRTUS + ", got '" + protocol + "'");
        }
        if (maxSessions < 1) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--max-sessions must be at least 1, got "
                    + maxSessions);
        }
        if (protocol.equals(GVIRTUS)) {
            for (String option : SESSION_ONLY) {
                if (parsed.hasMatchedOption(option)) {
                    throw new CommandLine.ParameterException(spec.commandLine(), option
                            + " applies to --protocol session only");
                }
            }
            GVirtuSLimits limits;
            try {
                limits = GVirtuSLimits.DEFAULT.withMaxInputBytes(maxInput);
            } catch (IllegalArgumentException e) {
                throw new CommandLine.ParameterException(spec.commandLine(), "--max-input: " + e.getMessage());
            }
            ServerLimits fit = ServerLimits.of(endpoint, maxSessions, 0);
            return GVirtuSServing.run(fit.endpoint(), fit.maxSessions(), limits, spec.commandLine().getOut(),
                    () -> announce(fit));
        }
        if (parsed.hasMatchedOption("--max-input")) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--max-input applies to --protocol gvirtus"
                    + " only");
        }
        if (regionSize < 1 || regionSize > (1L << 30)) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--region-size must be 1 byte to 1g, got "
                    + regionSize);
        }
        if (maxGroupSize < 1 || maxGroupSize > 0xffff) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--max-group-size must be 1 to 65535, got "
                    + maxGroupSize);
        }
        if (groupTimeout.isZero()) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--group-timeout must be positive");
        }
        if (maxCallInput < 0 || maxCallInput > SessionProtocol.MAX_CALL_INPUT) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--max-call-input must be 0 to 16m, got "
                    + maxCallInput);
        }
        if (routineTimeout.isZero()) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--routine-timeout must be positive");
        }
        // routine plugins come from servercomm's own class path, never from clients
        ExchangeSettings settings = new ExchangeSettings((int) regionSize, maxGroupSize, groupTimeout,
                RoutineRegistry.load(ServerMain.class.getClassLoader()), (int) maxCallInput, routineTimeout,
                idleTimeout);
        Endpoint served;
        try {
            served = secret.applyTo(endpoint);
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage(), e, null, null);
        }
        PrintWriter out = spec.commandLine().getOut();
        ServerLimits fit = ServerLimits.of(served, maxSessions, 0);
        SessionServer server = SessionServer.start(fit.endpoint(), fit.maxSessions(), requestTimeout, settings);
        announce(fit);
        // a logger made only now: one made when this class loads would fix slf4j-simple's level before
        // Cli.configureLogging has chosen it
        Logger log = LoggerFactory.getLogger(ServerMain.class);
        SecretOptions.exposureWarning(served).ifPresent(log::warn);
        // exit 0 once run() has released everything
        Cli.exitZeroOnSignal("servercomm-shutdown", () -> {
            server.stop();
            out.flush();
        }, server::awaitStopped, STOP_TIMEOUT, () -> finished);
        out.println("listening " + server.endpoint());
        out.flush();
        try {
            server.run();
        } finally {
            finished = true;
        }
        return 0;
    }
}
