package io.rdmacomm.clientcomm;

import io.rdmacomm.api.Access;
import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.CommunicatorException;
import io.rdmacomm.api.MemoryRegion;
import io.rdmacomm.cli.Cli;
import io.rdmacomm.session.ExchangeResult;
import io.rdmacomm.session.SessionProtocol;
import io.rdmacomm.session.SessionRequest;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.EnumSet;
import java.util.concurrent.Callable;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/**
 * {@code call}: a routine call in the GVirtuS style. The client registers an output region, sends the routine's
 * name, the region's descriptor and the input; the server runs the routine from its own registry and puts the
 * output one-sided into the region.
 */
@Command(name = "call", sortOptions = false,
        description = "Runs routine NAME on servercomm (built-ins: echo, upper, sum, sha256; more from the server's"
                + " plugins) with the given input; the server puts the output one-sided into a region this client"
                + " registered, and the output is printed. The server runs only routines it has; no code is sent.")
final class CallCommand implements Callable<Integer> {

    @ParentCommand
    private ClientMain client;

    @Spec
    private CommandSpec spec;

    @Parameters(index = "0", paramLabel = "NAME", description = "the routine to run")
    private String routine;

    @ArgGroup(exclusive = true)
    private Input input;

    @Option(names = "--output-size", paramLabel = "SIZE", defaultValue = "1m", converter = Cli.SizeConverter.class,
            description = "bytes of the region registered for the output (default: ${DEFAULT-VALUE})")
    private long outputSize;

    @Option(names = {"-h", "--help"}, usageHelp = true, description = "Show this help message and exit.")
    private boolean help;

    static final class Input {
        @Option(names = {"-i", "--input"}, paramLabel = "TEXT", description = "the input as text (UTF-8)")
        String text;

        @Option(names = {"-f", "--input-file"}, paramLabel = "FILE", description = "the input: a file's bytes")
        Path file;
    }

    @Override
    public Integer call() throws Exception {
        if (!SessionProtocol.isValidName(routine)) {
            throw new ParameterException(spec.commandLine(), "invalid routine name '" + routine + "': 1 to "
                    + SessionProtocol.MAX_NAME_LENGTH + " letters, digits, '.', '_' or '-'");
        }
        if (outputSize < 1 || outputSize > ReadCommand.MAX_LENGTH) {
            throw new ParameterException(spec.commandLine(), "--output-size must be 1 byte to 1g, got " + outputSize);
        }
        byte[] in = input == null ? new byte[0]
                : input.file != null ? Files.readAllBytes(input.file) : input.text.getBytes(StandardCharsets.UTF_8);
        if (in.length > SessionProtocol.MAX_CALL_INPUT) {
            throw new ParameterException(spec.commandLine(), "the input of " + in.length + " bytes exceeds the"
                    + " limit of " + SessionProtocol.MAX_CALL_INPUT);
        }
        try (Communicator peer = client.openSession(SessionRequest.call(routine, in.length));
                MemoryRegion output = peer.register(ByteBuffer.allocateDirect((int) outputSize),
                        EnumSet.of(Access.REMOTE_WRITE))) {
            byte[] descriptor = output.descriptor().toBytes();
            peer.write(ByteBuffer.allocate(2).putShort((short) descriptor.length).flip());
            peer.write(ByteBuffer.wrap(descriptor));
            peer.write(ByteBuffer.wrap(in));
            peer.sync();
            ExchangeResult result = ExchangeResult.expectOk(peer, "call of '" + routine + "' on " + peer.peerName());
            ByteBuffer body = result.body();
            if (body.remaining() != 8) {
                throw new CommunicatorException("call: result of " + body.remaining() + " bytes from "
                        + peer.peerName() + ", expected 8 (exit code and output length)");
            }
            int exitCode = body.getInt();
            int length = body.getInt();
            if (exitCode != 0) {
                throw new CommunicatorException("routine '" + routine + "' exited with code " + exitCode + ": "
                        + result.message());
            }
            if (length < 0 || length > outputSize) {
                throw new CommunicatorException("call: the server reports " + Integer.toUnsignedString(length)
                        + " bytes of output for a region of " + outputSize);
            }
            byte[] out = new byte[length];
            output.buffer().get(0, out);
            spec.commandLine().getOut().println(new String(out, StandardCharsets.UTF_8));
            spec.commandLine().getOut().flush();
        }
        return 0;
    }
}
