package io.rdmacomm.clientcomm;

import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.CommunicatorException;
import io.rdmacomm.api.RegionDescriptor;
import io.rdmacomm.api.RemoteAccessException;
import io.rdmacomm.cli.Cli;
import io.rdmacomm.session.ExchangeResult;
import io.rdmacomm.session.SessionProtocol;
import io.rdmacomm.session.SessionRequest;
import java.nio.ByteBuffer;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/** {@code read}: a one-sided get from the pattern region a READ session advertises, every byte verified. */
@Command(name = "read", sortOptions = false,
        description = "Gets LENGTH bytes at OFFSET one-sided from a region servercomm filled with the pattern"
                + " byte i = (i * 31 + 7) & 0xff, verifies them and prints the first 16. A range outside the region"
                + " is refused by the transport and reported.")
final class ReadCommand implements Callable<Integer> {
    static final long MAX_LENGTH = 1L << 30;
    private static final int SHOWN = 16;

    @ParentCommand
    private ClientMain client;

    @Spec
    private CommandSpec spec;

    @Option(names = {"-o", "--offset"}, paramLabel = "N", defaultValue = "0", converter = Cli.SizeConverter.class,
            description = "offset in the server's region (default: ${DEFAULT-VALUE})")
    private long offset;

    @Option(names = {"-l", "--length"}, paramLabel = "N", defaultValue = "64", converter = Cli.SizeConverter.class,
            description = "bytes to read, at most 1g (default: ${DEFAULT-VALUE})")
    private long length;

    @Option(names = {"-h", "--help"}, usageHelp = true, description = "Show this help message and exit.")
    private boolean help;

    @Override
    public Integer call() throws Exception {
        if (length < 1 || length > MAX_LENGTH) {
            throw new ParameterException(spec.commandLine(), "--length must be 1 byte to 1g, got " + length);
        }
        try (Communicator peer = client.openSession(SessionRequest.oneSidedRead())) {
            RegionDescriptor region = RegionDescriptor.readFrom(
                    ExchangeResult.expectOk(peer, "read from " + peer.peerName()).body());
            ByteBuffer dst = ByteBuffer.allocateDirect((int) length);
            RemoteAccessException refused = null;
            try {
                peer.get(region, offset, dst);
            } catch (RemoteAccessException e) {
                // the connection is intact: let the server release its region in order before reporting
                refused = e;
            }
            SessionProtocol.writeReadDone(peer);
            ExchangeResult.expectOk(peer, "read from " + peer.peerName());
            if (refused != null) {
                throw refused;
            }
            StringBuilder shown = new StringBuilder();
            for (int i = 0; i < length; i++) {
                byte expected = SessionProtocol.patternByte(offset + i);
                if (dst.get(i) != expected) {
                    throw new CommunicatorException(String.format(Locale.ROOT, "read: byte %d (offset %d) is 0x%02x,"
                            + " the pattern has 0x%02x", i, offset + i, dst.get(i), expected));
                }
                if (i < SHOWN) {
                    shown.append(String.format(Locale.ROOT, " %02x", dst.get(i)));
                }
            }
            spec.commandLine().getOut().printf(Locale.ROOT, "read: %d bytes at offset %d of the server's %d-byte"
                    + " region, pattern verified:%s%s%n", length, offset, region.length(), shown,
                    length > SHOWN ? " ..." : "");
            spec.commandLine().getOut().flush();
        }
        return 0;
    }
}
