package io.rdmacomm.clientcomm;

import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.CommunicatorException;
import io.rdmacomm.session.ExchangeResult;
import io.rdmacomm.session.SessionProtocol;
import java.io.IOException;
import java.nio.ByteBuffer;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;

/** The options of the group subcommands, and the formation result both read. */
final class GroupOptions {
    @Option(names = {"-g", "--group"}, paramLabel = "NAME", required = true,
            description = "the group to join; every member names the same group")
    String group;

    @Option(names = {"-k", "--members"}, paramLabel = "K", required = true,
            description = "how many clients the group has; every member announces the same K")
    int members;

    void validate(CommandSpec spec) {
        if (!SessionProtocol.isValidName(group)) {
            throw new ParameterException(spec.commandLine(), "invalid group name '" + group + "': 1 to "
                    + SessionProtocol.MAX_NAME_LENGTH + " letters, digits, '.', '_' or '-'");
        }
        if (members < 1 || members > 0xffff) {
            throw new ParameterException(spec.commandLine(), "--members must be 1 to 65535, got " + members);
        }
    }

    /** This client's place in the group, as the server announced it once the group was complete. */
    record Formation(int rank, int participants, int source) {
        static Formation read(Communicator peer, String what, int members) throws IOException {
            ByteBuffer body = ExchangeResult.expectOk(peer, what).body();
            if (body.remaining() != 6) {
                throw new CommunicatorException(what + ": group formation of " + body.remaining() + " bytes from "
                        + peer.peerName() + ", expected 6");
            }
            Formation f = new Formation(Short.toUnsignedInt(body.getShort()), Short.toUnsignedInt(body.getShort()),
                    Short.toUnsignedInt(body.getShort()));
            if (f.participants != members + 1 || f.rank < 1 || f.rank > members || f.source > members) {
                throw new CommunicatorException(what + ": the server announced rank " + f.rank + " of "
                        + f.participants + " participants (source " + f.source + ") for a group of " + members
                        + " members");
            }
            return f;
        }
    }
}
