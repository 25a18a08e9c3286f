package io.rdmacomm.bench;

import io.rdmacomm.api.Endpoint;
import io.rdmacomm.clientcomm.bench.Options;
import java.io.IOException;
import java.util.concurrent.Callable;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * What every baseline server command does: start the server on the endpoint (port 0 picks one), print
 * {@code listening URI} on stdout once it accepts connections (bench/compare waits for that line), serve until
 * SIGINT or SIGTERM. A command only says which server ({@link #start}).
 */
abstract class ServeHarness implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    /** A baseline server, bound and ready to serve. */
    interface Server {
        /** The port actually bound. */
        int port();

        /** Serves until {@link #stop()}; the thread that started the server must call it. */
        void run() throws IOException;

        /** Asks {@link #run()} to end and waits (bounded) until the server has closed everything. */
        void stop();
    }

    /**
     * Starts the server on {@code endpoint}, on the calling thread.
     *
     * @throws picocli.CommandLine.ParameterException if the endpoint or an option does not suit the server
     */
    abstract Server start(Endpoint endpoint) throws IOException;

    @Override
    public final Integer call() throws Exception {
        Endpoint endpoint = Options.endpoint(spec);
        Server server = start(endpoint);
        Runtime.getRuntime().addShutdownHook(new Thread(server::stop, "rdmacomm-bench-" + spec.name() + "-shutdown"));
        spec.commandLine().getOut().println("listening " + endpoint.withPort(server.port()));
        spec.commandLine().getOut().flush();
        server.run();
        return 0;
    }
}
