package io.rdmacomm.clientcomm;

import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.Communicators;
import io.rdmacomm.api.Endpoint;
import io.rdmacomm.clientcomm.bench.BenchCommand;
import io.rdmacomm.cli.Cli;
import io.rdmacomm.cli.SecretOptions;
import io.rdmacomm.session.SessionClient;
import io.rdmacomm.session.SessionRequest;
import java.io.IOException;
import java.io.PrintWriter;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine;

/** The {@code clientcomm} command line: global options, then one subcommand. */
@Command(name = "clientcomm", mixinStandardHelpOptions = true, version = "clientcomm 0.1.0",
        sortOptions = false,
        description = "Talks to a servercomm: one subcommand per exercise.",
        subcommands = {HelloCommand.class, EchoCommand.class, SendCommand.class, WriteCommand.class,
            ReadCommand.class, CallCommand.class, AllToAllCommand.class, BroadcastCommand.class, BenchCommand.class,
            GVirtuSCommand.class, StatsCommand.class})
public final class ClientMain implements Runnable {

    @Option(names = {"-e", "--endpoint"}, paramLabel = "URI", defaultValue = Cli.DEFAULT_ENDPOINT,
            converter = Cli.EndpointConverter.class,
            description = "endpoint of the servercomm (default: ${DEFAULT-VALUE})")
    Endpoint endpoint;

    @Mixin
    SecretOptions secret;

    @Option(names = {"-v", "--verbose"}, description = "log on stderr; print stack traces of errors")
    boolean verbose;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

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
        ClientMain main = new ClientMain();
        CommandLine cl = Cli.withErrorReporting(new CommandLine(main), "clientcomm", () -> main.verbose);
        cl.setOut(out);
        cl.setErr(err);
        return cl.execute(args);
    }

    @Override
    public void run() {
        throw new CommandLine.ParameterException(spec.commandLine(), "missing subcommand: one of "
                + spec.subcommands().keySet());
    }

    /** A failure to connect, named with the endpoint as the user gave it unless its message names it already. */
    private IOException connectFailure(IOException e) {
        String m = Cli.describe(e);
        return m.contains(endpoint.authority()) ? e : new IOException("cannot connect to " + endpoint + ": " + m, e);
    }

    /**
     * Connects to the endpoint and opens a session for {@code request} (the request goes with the handshake where
     * the transport can send it so); the caller owns the returned communicator. On failure nothing stays open.
     */
    Communicator openSession(SessionRequest request) throws IOException {
        Endpoint target;
        try {
            target = secret.applyTo(endpoint);
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage(), e, null, null);
        }
        Communicator peer;
        try {
            peer = Communicators.open(target.toString());
        } catch (IOException e) {
            throw connectFailure(e);
        }
        try {
            try {
                // the request goes with the handshake where the transport can send it so: one round trip less
                peer.connect(request.encode());
            } catch (IOException e) {
                throw connectFailure(e);
            }
            SessionClient.awaitOpened(peer, request);
            return peer;
        } catch (IOException | RuntimeException e) {
            try {
                peer.close();
            } catch (IOException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e;
        }
    }
}
