package io.rdmacomm.kvstore.cli;

import io.rdmacomm.api.Endpoint;
import io.rdmacomm.cli.Cli;
import io.rdmacomm.cli.ServerLimits;
import io.rdmacomm.kvstore.KvServer;
import io.rdmacomm.kvstore.KvServerConfig;
import io.rdmacomm.kvstore.ValueTransfer;
import java.util.Locale;
import java.time.Duration;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** The {@code kv-server} command line. */
@Command(name = "kv-server", mixinStandardHelpOptions = true, version = "kv-server 0.1.0", sortOptions = false,
        description = {
            "Serves a key-value store until SIGINT or SIGTERM: a gRPC control plane on --listen and a data plane"
                + " on --data-endpoint, where values move between the memory pool and each client's registered"
                + " buffer, one-sided or inline (--values; see README.md).",
            "Prints 'listening ADDRESS data URI' on stdout once it serves, with the ports actually bound."})
public final class KvServerMain implements Callable<Integer> {
    private static final Duration STOP_TIMEOUT = Duration.ofSeconds(15);

    @Option(names = {"-l", "--listen"}, paramLabel = "ADDRESS", defaultValue = "127.0.0.1:50051",
            description = "gRPC control plane: HOST:PORT (gRPC on TCP), or rdma://HOST:PORT or tcp://HOST:PORT"
                    + " (gRPC on this project's rdma:// or tcp:// transport; kv-client --server takes the printed"
                    + " URI); port 0 picks a free port (default: ${DEFAULT-VALUE})")
    private String listen;

    @Option(names = {"-d", "--data-endpoint"}, paramLabel = "URI", defaultValue = "tcp://127.0.0.1:0",
            converter = Cli.EndpointConverter.class,
            description = "data plane endpoint: rdma://HOST:PORT, tcp://HOST:PORT or local://NAME (in-process"
                    + " only); port 0 picks a free port (default: ${DEFAULT-VALUE})")
    private Endpoint dataEndpoint;

    @Option(names = {"-m", "--memory"}, paramLabel = "SIZE", defaultValue = "1g", converter = Cli.SizeConverter.class,
            description = "memory pool for values, allocated once at start in the JVM's direct memory, which"
                    + " must hold it and 64m more (-XX:MaxDirectMemorySize, else the heap's maximum); at most just"
                    + " under 2g (default: ${DEFAULT-VALUE})")
    private long memory;

    @Option(names = "--max-value", paramLabel = "SIZE", defaultValue = "16m", converter = Cli.SizeConverter.class,
            description = "largest value accepted (default: ${DEFAULT-VALUE})")
    private long maxValue;

    @Option(names = "--max-key", paramLabel = "BYTES", defaultValue = "1024",
            description = "longest key accepted, at most 65535 (default: ${DEFAULT-VALUE})")
    private int maxKey;

    @Option(names = "--max-sessions", paramLabel = "N", defaultValue = "10000",
            description = "clients served at once; further sessions are refused as busy; lowered at start to what the"
                    + " descriptor limit (ulimit -n) holds with one descriptor per session and one per client"
                    + " process (its control-plane connection), which is printed; a session on a control-plane"
                    + " connection past those is refused too; on an rdma:// data plane its maxPeers likewise"
                    + " (default: ${DEFAULT-VALUE})")
    private int maxSessions;

    @Option(names = "--attach-timeout", paramLabel = "DURATION", defaultValue = "10s",
            converter = Cli.DurationConverter.class,
            description = "how long a new session may take to connect its data plane (default: ${DEFAULT-VALUE})")
    private Duration attachTimeout;

    @Option(names = "--values", paramLabel = "MODE", defaultValue = "auto",
            description = "how values move on the data plane: one-sided (the server puts and gets them in the"
                    + " client's registered buffer), inline (inside the request and reply messages), or auto:"
                    + " inline on tcp://, whose one-sided operations are messages on the same socket anyway,"
                    + " one-sided elsewhere (default: ${DEFAULT-VALUE})")
    private String values;

    @Option(names = "--loops", paramLabel = "N", defaultValue = "1",
            description = "threads serving the data connections, each as an event loop that takes every"
                    + " connection's requests in turn as they arrive; 0: a thread per connection (default:"
                    + " ${DEFAULT-VALUE}). Transports that cannot say what is readable get a thread per connection")
    private int loops;

    @Option(names = "--loop-spin", paramLabel = "DURATION", defaultValue = "50us",
            converter = Cli.DurationConverter.class,
            description = "how long an idle loop keeps looking for requests itself before it sleeps (rdma://:"
                    + " driving UCX progress; tcp:// and local://: polling the connections that were idle), so that"
                    + " requests arriving meanwhile wake no thread; 0: sleep at once (default: ${DEFAULT-VALUE})")
    private Duration loopSpin;

    @Option(names = {"-v", "--verbose"}, description = "log sessions on stderr; print stack traces of errors")
    private boolean verbose;

    @CommandLine.Spec
    private CommandLine.Model.CommandSpec spec;

    private volatile boolean finished;

    public static void main(String[] args) {
        System.exit(execute(args));
    }

    static int execute(String[] args) {
        Cli.configureLogging(args);
        KvServerMain main = new KvServerMain();
        return Cli.withErrorReporting(new CommandLine(main), "kv-server", () -> main.verbose).execute(args);
    }

    @Override
    public Integer call() throws Exception {
        Endpoint address;
        Endpoint control = null;
        if (listen.contains("://")) {
            try {
                control = Endpoint.parse(listen);
                KvServerConfig.checkControlEndpoint(control);
            } catch (IllegalArgumentException e) {
                throw new CommandLine.ParameterException(spec.commandLine(), "--listen '" + listen + "': "
                        + e.getMessage());
            }
            address = control;
        } else {
            try {
                address = Endpoint.parse("tcp://" + listen);
            } catch (IllegalArgumentException e) {
                throw new CommandLine.ParameterException(spec.commandLine(), "--listen '" + listen + "' is not"
                        + " HOST:PORT, rdma://HOST:PORT or tcp://HOST:PORT");
            }
        }
        ValueTransfer transfer = switch (values) {
            case "auto", "one-sided", "inline" ->
                    ValueTransfer.valueOf(values.replace('-', '_').toUpperCase(Locale.ROOT));
            default -> throw new CommandLine.ParameterException(spec.commandLine(), "--values must be auto, one-sided"
                    + " or inline, got '" + values + "'");
        };
        KvServerConfig config;
        try {
            // a session holds its data connection; a client process its control-plane connection, which its
            // sessions share (KvClient.connect(KvControlClient, ...); one per session where they do not)
            ServerLimits fit = ServerLimits.of(dataEndpoint, Math.max(1, maxSessions), 0, 1);
            System.err.println(fit.describe("kv-server", "sessions"));
            System.err.flush();
            config = new KvServerConfig(address.host(), address.port(), fit.endpoint(), memory, maxValue, maxKey,
                    maxSessions < 1 ? maxSessions : fit.maxSessions(), attachTimeout, transfer, loops, loopSpin,
                    control, fit.plan().maxPeers());
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
        }
        KvServer server = KvServer.start(config);
        Cli.exitZeroOnSignal("kv-server-shutdown", server::close, server::awaitClosed, STOP_TIMEOUT, () -> finished);
        System.out.println("listening " + server.controlAddress() + " data " + server.dataEndpoint());
        System.out.flush();
        try {
            server.awaitClosed();
        } finally {
            finished = true;
        }
        return 0;
    }
}
