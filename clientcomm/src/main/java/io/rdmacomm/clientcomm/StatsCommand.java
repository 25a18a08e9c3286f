package io.rdmacomm.clientcomm;

import io.rdmacomm.api.Communicator;
import io.rdmacomm.session.ServerStats;
import io.rdmacomm.session.SessionRequest;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/** {@code stats}: one STATS session; the server's counters on one line. */
@Command(name = "stats", sortOptions = false,
        description = {"Asks servercomm for its counters and prints them on one line as NAME=VALUE pairs separated"
                + " by spaces, in the server's order: sessions (live, this one included), sessionsServed, maxSessions,"
                + " regions and regionBytes (memory the server process holds registered, every transport), then"
                + " regions.T and regionBytes.T per transport T (tcp, ucx-jucx, ucx-ffm, verbs).",
            "Example: sessions=1 sessionsServed=12 maxSessions=64 regions=0 regionBytes=0 regions.tcp=0"
                + " regionBytes.tcp=0"})
final class StatsCommand implements Callable<Integer> {

    @ParentCommand
    private ClientMain client;

    @Spec
    private CommandSpec spec;

    @Option(names = {"-h", "--help"}, usageHelp = true, description = "Show this help message and exit.")
    private boolean help;

    @Override
    public Integer call() throws Exception {
        ServerStats stats;
        try (Communicator peer = client.openSession(SessionRequest.stats())) {
            stats = ServerStats.read(peer);
        }
        spec.commandLine().getOut().println(stats.toLine());
        spec.commandLine().getOut().flush();
        return 0;
    }
}
