package io.rdmacomm.servercomm;

import io.rdmacomm.api.Endpoint;
import io.rdmacomm.cli.Cli;
import io.rdmacomm.cli.SecretOptions;
import io.rdmacomm.session.ExchangeSettings;
import io.rdmacomm.session.SessionProtocol;
import io.rdmacomm.session.SessionServer;
import io.rdmacomm.session.routine.RoutineRegistry;
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
                + " ECHO, SINK, SEND, WRITE, READ, CALL, ALLTOALL and BROADCAST (see README.md).",
            "Prints 'listening <endpoint>' on stdout once it accepts connections."})
public final class ServerMain implements Callable<Integer> {
    private static final Duration STOP_TIMEOUT = Duration.ofSeconds(10);

    @Option(names = {"-e", "--endpoint"}, paramLabel = "URI", defaultValue = Cli.DEFAULT_ENDPOINT,
            converter = Cli.EndpointConverter.class,
            description = "endpoint to listen on; port 0 picks a free port (default: ${DEFAULT-VALUE})")
    private Endpoint endpoint;

    @Option(names = "--max-sessions", paramLabel = "N", defaultValue = "256",
            description = "sessions served at once; further clients are refused as busy (default: ${DEFAULT-VALUE})")
    private int maxSessions;

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
                    + " client) before it is closed; 0 waits for ever (default: ${DEFAULT-VALUE})")
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
        Cli.configureLogging(args);
        ServerMain main = new ServerMain();
        return Cli.withErrorReporting(new CommandLine(main), "servercomm", () -> main.verbose).execute(args);
    }

    @Override
    public Integer call() throws Exception {
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
        SessionServer server = SessionServer.start(served, maxSessions, requestTimeout, settings);
        // a logger made only now: one made when this class loads would fix slf4j-simple's level before
        // Cli.configureLogging has chosen it
        Logger log = LoggerFactory.getLogger(ServerMain.class);
        SecretOptions.exposureWarning(served).ifPresent(log::warn);
        // The JVM exits with 128+signal after SIGINT/SIGTERM even when every hook finished; a server that
        // stopped cleanly on request exits 0 instead, once run() has released everything.
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            if (finished) {
                return;
            }
            server.stop();
            try {
                if (server.awaitStopped(STOP_TIMEOUT)) {
                    System.out.flush();
                    Runtime.getRuntime().halt(0);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "servercomm-shutdown"));
        System.out.println("listening " + server.endpoint());
        System.out.flush();
        try {
            server.run();
        } finally {
            finished = true;
        }
        return 0;
    }
}
