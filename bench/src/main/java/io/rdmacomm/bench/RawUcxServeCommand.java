package io.rdmacomm.bench;

import io.rdmacomm.api.Endpoint;
import java.net.InetSocketAddress;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

@Command(name = "raw-ucx-serve", mixinStandardHelpOptions = true, usageHelpAutoWidth = true,
        description = {
            "Server of the raw JUCX baselines: echo and sink over tagged UCX messages.",
            "One UCP context and worker, busy-polled while a client is connected; clients are served one at a "
                + "time. Takes an rdma://host:port endpoint (port 0 picks one); UCX_TLS chooses the transport. "
                + "Prints 'listening rdma://host:port' on stdout once it accepts connections; runs until SIGINT "
                + "or SIGTERM."})
final class RawUcxServeCommand implements Callable<Integer> {
    @ParentCommand
    BenchCommand bench;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() throws Exception {
        Endpoint endpoint = bench.endpoint();
        InetSocketAddress address = Options.rawUcxAddress(spec, endpoint);
        // the worker belongs to this thread: it listens, serves and closes; SIGTERM only asks it to stop
        RawUcxServer server = RawUcxServer.listen(address, System.err);
        Runtime.getRuntime().addShutdownHook(new Thread(server::stop, "rdmacomm-bench-raw-ucx-shutdown"));
        spec.commandLine().getOut().println("listening " + endpoint.withPort(server.address().getPort()));
        spec.commandLine().getOut().flush();
        server.run();
        return 0;
    }
}
