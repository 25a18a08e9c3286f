package io.rdmacomm.clientcomm;

import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.CommunicatorException;
import io.rdmacomm.session.ExchangeResult;
import io.rdmacomm.session.SessionProtocol;
import io.rdmacomm.session.SessionRequest;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.zip.CRC32C;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/** {@code send}: one message through a SEND session; the server's acknowledgement is checked and printed. */
@Command(name = "send", sortOptions = false,
        description = "Sends a message to servercomm (two-sided send/receive) and prints the server's"
                + " acknowledgement: the bytes it received and their CRC32C, checked against what was sent.")
final class SendCommand implements Callable<Integer> {

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
        if (sent.length > SessionProtocol.MAX_SEND_LENGTH) {
            throw new ParameterException(spec.commandLine(), "--message of " + sent.length + " bytes exceeds the"
                    + " limit of " + SessionProtocol.MAX_SEND_LENGTH);
        }
        CRC32C crc = new CRC32C();
        crc.update(sent);
        int expectedCrc = (int) crc.getValue();
        try (Communicator peer = client.openSession(SessionRequest.send(sent.length))) {
            peer.write(ByteBuffer.wrap(sent));
            peer.sync();
            ByteBuffer ack = ExchangeResult.expectOk(peer, "send to " + peer.peerName()).body();
            if (ack.remaining() != 8) {
                throw new CommunicatorException("send: acknowledgement of " + ack.remaining() + " bytes from "
                        + peer.peerName() + ", expected 8");
            }
            int count = ack.getInt();
            int theirCrc = ack.getInt();
            if (count != sent.length || theirCrc != expectedCrc) {
                throw new CommunicatorException(String.format(Locale.ROOT, "send: the server acknowledged %d bytes"
                        + " with CRC32C 0x%08x, but %d bytes with CRC32C 0x%08x were sent", count, theirCrc,
                        sent.length, expectedCrc));
            }
            spec.commandLine().getOut().printf(Locale.ROOT, "send: %d bytes sent; the server acknowledged %d bytes"
                    + " with CRC32C 0x%08x, matching%n", sent.length, count, theirCrc);
            spec.commandLine().getOut().flush();
        }
        return 0;
    }
}
