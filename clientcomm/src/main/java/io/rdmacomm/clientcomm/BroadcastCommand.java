package io.rdmacomm.clientcomm;

import io.rdmacomm.api.Communicator;
import io.rdmacomm.collectives.Collectives;
import io.rdmacomm.session.ExchangeResult;
import io.rdmacomm.session.SessionProtocol;
import io.rdmacomm.session.SessionRequest;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/** {@code broadcast}: this client's part in a broadcast by the server to a named group. */
@Command(name = "broadcast", sortOptions = false,
        description = "Joins a named group of K clients on servercomm; once all K have joined, the server"
                + " broadcasts to every member the message of the lowest-ranked member that offered one (or its"
                + " own when none did), and each member prints it with its source rank.")
final class BroadcastCommand implements Callable<Integer> {

    @ParentCommand
    private ClientMain client;

    @Spec
    private CommandSpec spec;

    @Mixin
    private GroupOptions groupOptions;

    @Option(names = {"-m", "--message"}, paramLabel = "TEXT",
            description = "a message to offer for the broadcast, at most 64k bytes of UTF-8")
    private String message;

    @Option(names = {"-h", "--help"}, usageHelp = true, description = "Show this help message and exit.")
    private boolean help;

    @Override
    public Integer call() throws Exception {
        groupOptions.validate(spec);
        byte[] offered = message == null ? new byte[0] : message.getBytes(StandardCharsets.UTF_8);
        if (offered.length > SessionProtocol.MAX_GROUP_MESSAGE) {
            throw new ParameterException(spec.commandLine(), "--message of " + offered.length + " bytes exceeds"
                    + " the limit of " + SessionProtocol.MAX_GROUP_MESSAGE);
        }
        String group = groupOptions.group;
        int members = groupOptions.members;
        try (Communicator peer = client.openSession(SessionRequest.broadcast(group, members, offered.length))) {
            if (offered.length > 0) {
                peer.write(ByteBuffer.wrap(offered));
                peer.sync();
            }
            GroupOptions.Formation f = GroupOptions.Formation.read(peer, "broadcast in group '" + group + "'",
                    members);
            ByteBuffer data = Collectives.receiveBroadcast(peer, SessionProtocol.MAX_GROUP_MESSAGE);
            ExchangeResult.expectOk(peer, "broadcast in group '" + group + "' completion");
            spec.commandLine().getOut().printf("broadcast: group %s, rank %d of %d participants, from rank %d%s: %s%n",
                    group, f.rank(), f.participants(), f.source(),
                    f.source() == 0 ? " (server)" : f.source() == f.rank() ? " (this client)" : "",
                    StandardCharsets.UTF_8.decode(data));
            spec.commandLine().getOut().flush();
        }
        return 0;
    }
}
