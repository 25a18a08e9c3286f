package io.rdmacomm.kvstore.cli;

import io.rdmacomm.cli.Cli;
import java.io.PrintWriter;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/** {@code bench}: ops/s and latency of GET and PUT from C concurrent clients. */
@Command(name = "bench", sortOptions = false,
        description = "Measures C clients, each with its own session (and a registered buffer of SIZE bytes, at"
                + " least 4k), doing N operations in all on K keys preloaded with SIZE-byte values: GET with"
                + " probability R, else PUT. Prints ops/s and latency percentiles (one line, or one JSON object"
                + " with --json).")
final class BenchCommand implements Callable<Integer> {
    @ParentCommand
    private KvClientMain client;

    @Spec
    private CommandSpec spec;

    @Option(names = {"-n", "--ops"}, paramLabel = "N", defaultValue = "100000",
            description = "operations measured, over all clients (default: ${DEFAULT-VALUE})")
    private long ops;

    @Option(names = "--value-size", paramLabel = "SIZE", defaultValue = "4k", converter = Cli.SizeConverter.class,
            description = "bytes per value (default: ${DEFAULT-VALUE})")
    private long valueSize;

    @Option(names = {"-c", "--clients"}, paramLabel = "C", defaultValue = "1",
            description = "concurrent clients, one session and one operation in flight each; the data path's"
                    + " sessions share one control-plane connection (default: ${DEFAULT-VALUE})")
    private int clients;

    @Option(names = {"-t", "--threads"}, paramLabel = "T",
            description = "threads driving the clients (data path only): each keeps an operation in flight on"
                    + " every client it drives and takes their answers in turn, as redis-benchmark's one event loop"
                    + " does (default: C, a thread per client)")
    private Integer threads;

    @Option(names = {"-r", "--get-ratio"}, paramLabel = "R", defaultValue = "0.9",
            description = "share of GETs, 0 to 1; the rest are PUTs (default: ${DEFAULT-VALUE})")
    private double getRatio;

    @Option(names = {"-k", "--keys"}, paramLabel = "K", defaultValue = "1000",
            description = "distinct keys, preloaded before measuring (default: ${DEFAULT-VALUE})")
    private int keys;

    @Option(names = {"-w", "--warmup"}, paramLabel = "N", defaultValue = "20000",
            description = "operations before measuring, over all clients (default: ${DEFAULT-VALUE})")
    private long warmup;

    @Option(names = "--path", paramLabel = "PATH", defaultValue = "data",
            description = "data: the data plane (values one-sided or inline, as the server chose); control: the gRPC"
                    + " PUT/GET of the control plane, for comparison (default: ${DEFAULT-VALUE})")
    private String path;

    @Option(names = "--json", description = "print one JSON object instead of a line")
    private boolean json;

    @Option(names = {"-h", "--help"}, usageHelp = true, description = "Show this help message and exit.")
    private boolean help;

    @Override
    public Integer call() throws Exception {
        if (ops < 1) {
            throw new ParameterException(spec.commandLine(), "--ops must be at least 1, got " + ops);
        }
        if (clients < 1 || clients > 1024) {
            throw new ParameterException(spec.commandLine(), "--clients must be 1 to 1024, got " + clients);
        }
        if (getRatio < 0 || getRatio > 1 || Double.isNaN(getRatio)) {
            throw new ParameterException(spec.commandLine(), "--get-ratio must be 0 to 1, got " + getRatio);
        }
        if (keys < 1) {
            throw new ParameterException(spec.commandLine(), "--keys must be at least 1, got " + keys);
        }
        if (warmup < 0) {
            throw new ParameterException(spec.commandLine(), "--warmup must not be negative, got " + warmup);
        }
        if (valueSize < 0 || valueSize > client.buffer) {
            throw new ParameterException(spec.commandLine(), "--value-size must be 0 to --buffer (" + client.buffer
                    + " bytes), got " + valueSize);
        }
        if (!path.equals("data") && !path.equals("control")) {
            throw new ParameterException(spec.commandLine(), "--path must be data or control, got '" + path + "'");
        }
        int t = threads == null ? clients : threads;
        if (t < 1 || t > clients) {
            throw new ParameterException(spec.commandLine(), "--threads must be 1 to --clients (" + clients
                    + "), got " + t);
        }
        if (t != clients && path.equals("control")) {
            throw new ParameterException(spec.commandLine(), "--threads applies to the data path only: on the"
                    + " control path every client has a thread of its own");
        }
        BenchRun run = new BenchRun(client, path.equals("data"), clients, t, (int) valueSize, getRatio, keys);
        BenchResult r = run.run(warmup, ops);
        PrintWriter out = spec.commandLine().getOut();
        if (json) {
            out.println(Json.write(r));
        } else {
            out.printf(Locale.ROOT, "bench: %d ops (%.0f%% get) of %d-byte values on %d keys, %d client%s on %d"
                    + " thread%s, %s path"
                    + " over %s: %.0f ops/s, p50 %.1f µs, p99 %.1f µs; get p50 %.1f p99 %.1f µs; put p50 %.1f"
                    + " p99 %.1f µs; %.0f B allocated/op%n", r.ops(), r.getRatio() * 100, r.valueSize(), r.keys(),
                    r.clients(), r.clients() == 1 ? "" : "s", r.threads(), r.threads() == 1 ? "" : "s", r.path(),
                    r.dataEndpoint(), r.opsPerSec(), r.p50Us(), r.p99Us(), r.getP50Us(), r.getP99Us(), r.putP50Us(),
                    r.putP99Us(), r.allocatedBytesPerOp());
        }
        out.flush();
        return 0;
    }
}
