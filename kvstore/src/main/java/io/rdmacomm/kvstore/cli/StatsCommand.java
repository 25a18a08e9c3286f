package io.rdmacomm.kvstore.cli;

import io.rdmacomm.kvstore.KvControlClient;
import io.rdmacomm.kvstore.KvStats;
import java.io.PrintWriter;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/** {@code stats}: the server's figures, one per line. */
@Command(name = "stats", description = "Prints the server's figures (control plane only), one 'name: value' a line.")
final class StatsCommand implements Callable<Integer> {
    @ParentCommand
    private KvClientMain client;

    @Spec
    private CommandSpec spec;

    @Option(names = "--json", description = "one JSON object instead")
    private boolean json;

    @Option(names = {"-h", "--help"}, usageHelp = true, description = "Show this help message and exit.")
    private boolean help;

    @Override
    public Integer call() throws Exception {
        KvStats s;
        try (KvControlClient control = client.control()) {
            s = control.stats();
        }
        PrintWriter out = spec.commandLine().getOut();
        if (json) {
            out.println(Json.write(s));
        } else {
            out.printf(Locale.ROOT, "data_endpoint: %s%nkeys: %d%nvalue_bytes: %d%npool_bytes: %d%nused_bytes: %d%n"
                    + "free_bytes: %d%nlargest_free_block: %d%nfragmentation: %.4f%nsessions: %d%ngets: %d%n"
                    + "puts: %d%ndeletes: %d%nmisses: %d%nerrors: %d%nsessions_failed: %d%n", s.dataEndpoint(),
                    s.keys(), s.valueBytes(), s.poolBytes(), s.usedBytes(), s.freeBytes(), s.largestFreeBlock(),
                    s.fragmentation(), s.sessions(), s.gets(), s.puts(), s.deletes(), s.misses(), s.errors(),
                    s.sessionsFailed());
        }
        out.flush();
        return 0;
    }
}
