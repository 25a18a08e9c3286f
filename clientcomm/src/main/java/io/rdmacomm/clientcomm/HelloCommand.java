package io.rdmacomm.clientcomm;

import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.CommunicatorException;
import io.rdmacomm.session.SessionRequest;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/** {@code hello}: one message through an ECHO session, printed as it came back. */
@Command(name = "hello", sortOptions = false,
        description = "Sends a message to servercomm's echo and prints the reply.")
final class HelloCommand implements Callable<Integer> {

    @ParentCommand
    private ClientMain client;

    @Spec
    private CommandSpec spec;

    @Option(names = {"-m", "--message"}, paramLabel = "TEXT", defaultValue = "hello from clientcomm",
            description = "the message (default: ${DEFAULT-VALUE})")
    private String message;

    @Option(names = {"-h", "--help"}, usageHelp = true, description = "Show this help message and exit.")
    private boolean help;

    @Override
    public Integer call() throws Exception {
        byte[] sent = message.getBytes(StandardCharsets.UTF_8);
        try (Communicator peer = client.openSession(SessionRequest.echo())) {
            peer.write(ByteBuffer.wrap(sent));
            peer.sync();
            ByteBuffer reply = ByteBuffer.allocate(sent.length);
            peer.readFully(reply);
            if (!Arrays.equals(sent, reply.array())) {
                throw new CommunicatorException("the echo from " + peer.peerName() + " differs from the message sent");
            }
            spec.commandLine().getOut().println(new String(reply.array(), StandardCharsets.UTF_8));
            spec.commandLine().getOut().flush();
        }
        return 0;
    }
}
