package io.rdmacomm.servercomm;

import io.rdmacomm.api.Endpoint;
import java.time.Duration;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** The {@code servercomm} command line. */
@Command(name = "servercomm", mixinStandardHelpOptions = true, version = "servercomm 0.1.0",
        sortOptions = false,
        description = {
            "Serves clientcomm sessions on one endpoint, many clients at once, until SIGINT or SIGTERM:"
                + " ECHO (every byte read goes back) and SINK (bytes are consumed and their total acknowledged).",
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

    @Option(names = {"-v", "--verbose"}, description = "log every session on stderr; print stack traces of errors")
    private boolean verbose;

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
        Server server = Server.start(endpoint, maxSessions, requestTimeout);
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
