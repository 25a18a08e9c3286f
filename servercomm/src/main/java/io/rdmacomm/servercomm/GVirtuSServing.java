package io.rdmacomm.servercomm;

import io.rdmacomm.api.Communicators;
import io.rdmacomm.api.Endpoint;
import io.rdmacomm.cli.Cli;
import io.rdmacomm.gvirtus.BuiltinRoutines;
import io.rdmacomm.gvirtus.GVirtuSBackend;
import io.rdmacomm.gvirtus.GVirtuSLimits;
import java.io.IOException;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;

/** {@code servercomm --protocol gvirtus}: a {@link GVirtuSBackend} until SIGINT or SIGTERM. */
final class GVirtuSServing {
    private static final Duration STOP_TIMEOUT = Duration.ofSeconds(10);
    private static final Duration CHECK_EVERY = Duration.ofMinutes(1);

    private GVirtuSServing() {
    }

    /**
     * Serves the built-in routines and those of {@code GVirtuSRoutine} plugins on servercomm's own class path; runs
     * {@code started}, then prints the listening line, once accepting. Returns only if the backend stopped accepting
     * on its own (an error).
     */
    static int run(Endpoint endpoint, int maxSessions, GVirtuSLimits limits, PrintWriter out, Runnable started)
            throws IOException, InterruptedException {
        GVirtuSBackend backend = GVirtuSBackend.builder()
                .registerAll(BuiltinRoutines.all())
                .discover(GVirtuSServing.class.getClassLoader())
                .maxSessions(maxSessions)
                .limits(limits)
                .start(Communicators.serve(endpoint.toString()));
        // exit 0 once the backend has closed on a signal; not after a failure, whose status decides
        AtomicBoolean failed = new AtomicBoolean();
        Cli.exitZeroOnSignal("servercomm-shutdown", () -> {
            backend.close();
            out.flush();
        }, backend::awaitStopped, STOP_TIMEOUT, failed::get);
        started.run();
        out.println("listening " + backend.endpoint());
        out.flush();
        while (!backend.awaitStopped(CHECK_EVERY)) {
            // serving; a signal ends the process through the hook
        }
        failed.set(true);
        throw new IOException("the GVirtuS backend on " + backend.endpoint() + " stopped accepting; see the log");
    }
}
