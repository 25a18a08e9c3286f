package io.rdmacomm.clientcomm;

import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.CommunicatorException;
import io.rdmacomm.cli.Cli;
import io.rdmacomm.collectives.Collectives;
import io.rdmacomm.session.ExchangeResult;
import io.rdmacomm.session.SessionProtocol;
import io.rdmacomm.session.SessionRequest;
import java.io.PrintWriter;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/** {@code alltoall}: this client's part in a sequential all-to-all of a named group, the server being rank 0. */
@Command(name = "alltoall", sortOptions = false,
        description = "Joins a named group of K clients on servercomm; once all K have joined, each contributes"
                + " SIZE bytes (its message, zero-padded) to a sequential all-to-all with the server as rank 0"
                + " (contributing 'server'), and prints every participant's contribution in rank order.")
final class AllToAllCommand implements Callable<Integer> {

    @ParentCommand
    private ClientMain client;

    @Spec
    private CommandSpec spec;

    @Mixin
    private GroupOptions groupOptions;

    @Option(names = {"-s", "--size"}, paramLabel = "N", defaultValue = "64", converter = Cli.SizeConverter.class,
            description = "bytes each participant contributes, 1 to 64k (default: ${DEFAULT-VALUE})")
    private long size;

    @Option(names = {"-m", "--message"}, paramLabel = "TEXT", required = true,
            description = "this client's contribution, at most N bytes of UTF-8")
    private String message;

    @Option(names = {"-h", "--help"}, usageHelp = true, description = "Show this help message and exit.")
    private boolean help;

    @Override
    public Integer call() throws Exception {
        groupOptions.validate(spec);
        if (size < 1 || size > SessionProtocol.MAX_GROUP_MESSAGE) {
            throw new ParameterException(spec.commandLine(), "--size must be 1 to "
                    + SessionProtocol.MAX_GROUP_MESSAGE + " bytes, got " + size);
        }
        byte[] text = message.getBytes(StandardCharsets.UTF_8);
        if (text.length > size) {
            throw new ParameterException(spec.commandLine(), "--message of " + text.length + " bytes does not fit"
                    + " --size " + size);
        }
        byte[] contribution = Arrays.copyOf(text, (int) size);
        String group = groupOptions.group;
        int members = groupOptions.members;
        try (Communicator peer = client.openSession(SessionRequest.allToAll(group, members, (int) size))) {
            String what = "alltoall in group '" + group + "'";
            GroupOptions.Formation f = GroupOptions.Formation.read(peer, what, members);
            Collectives.AllToAllResult all = Collectives.allToAll(peer, ByteBuffer.wrap(contribution),
                    f.participants());
            if (all.participants() != f.participants()) {
                throw new CommunicatorException(what + ": " + all.participants() + " contributions arrived, "
                        + f.participants() + " were announced");
            }
            if (!all.contribution(f.rank()).equals(ByteBuffer.wrap(contribution))) {
                throw new CommunicatorException(what + ": rank " + f.rank() + "'s contribution in the result differs"
                        + " from the one this client sent");
            }
            ExchangeResult.expectOk(peer, what + " completion");
            PrintWriter out = spec.commandLine().getOut();
            out.printf("alltoall: group %s, rank %d of %d participants, %d bytes each%n", group, f.rank(),
                    f.participants(), size);
            for (int rank = 0; rank < f.participants(); rank++) {
                out.printf("rank %d: %s%s%n", rank, text(all.contribution(rank)),
                        rank == f.rank() ? " (this client)" : "");
            }
            out.flush();
        }
        return 0;
    }

    /** A contribution as text: UTF-8 without its zero padding. */
    static String text(ByteBuffer contribution) {
        byte[] b = new byte[contribution.remaining()];
        contribution.duplicate().get(b);
        int end = b.length;
        while (end > 0 && b[end - 1] == 0) {
            end--;
        }
        return new String(b, 0, end, StandardCharsets.UTF_8);
    }
}
