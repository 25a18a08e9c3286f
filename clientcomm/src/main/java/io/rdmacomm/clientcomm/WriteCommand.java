package io.rdmacomm.clientcomm;

import io.rdmacomm.api.Access;
import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.CommunicatorException;
import io.rdmacomm.api.RegionDescriptor;
import io.rdmacomm.cli.Cli;
import io.rdmacomm.session.ExchangeResult;
import io.rdmacomm.session.SessionProtocol;
import io.rdmacomm.session.SessionRequest;
import java.nio.ByteBuffer;
import java.security.MessageDigest;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/**
 * {@code write}: SIZE random bytes put one-sided into the region a WRITE session advertises, chunk by chunk with a
 * notification after each; the server's SHA-256 of what landed in its memory is compared with the client's.
 */
@Command(name = "write", sortOptions = false,
        description = "Puts SIZE random bytes one-sided into a region servercomm registered and advertised (in"
                + " chunks when SIZE exceeds it), notifies the server after each chunk, and compares the server's"
                + " SHA-256 of what it received with the SHA-256 of what was sent.")
final class WriteCommand implements Callable<Integer> {
    /** The largest chunk, whatever the server's region: bounds the client's memory. */
    static final int MAX_CHUNK = 16 << 20;

    @ParentCommand
    private ClientMain client;

    @Spec
    private CommandSpec spec;

    @Option(names = {"-s", "--size"}, paramLabel = "SIZE", defaultValue = "1m", converter = Cli.SizeConverter.class,
            description = "bytes to write: digits with an optional k, m or g (default: ${DEFAULT-VALUE})")
    private long size;

    @Option(names = {"-h", "--help"}, usageHelp = true, description = "Show this help message and exit.")
    private boolean help;

    @Override
    public Integer call() throws Exception {
        if (size < 1) {
            throw new ParameterException(spec.commandLine(), "--size must be at least 1 byte, got " + size);
        }
        try (Communicator peer = client.openSession(SessionRequest.oneSidedWrite(size))) {
            ByteBuffer advertised = ExchangeResult.expectOk(peer, "write to " + peer.peerName()).body();
            RegionDescriptor region = RegionDescriptor.readFrom(advertised);
            if (region.length() < 1 || !region.access().contains(Access.REMOTE_WRITE)) {
                throw new CommunicatorException("write: the server advertised region " + region
                        + ", which cannot take a write");
            }
            int chunk = (int) Math.min(Math.min(region.length(), MAX_CHUNK), size);
            ByteBuffer buffer = ByteBuffer.allocateDirect(chunk);
            byte[] bytes = new byte[chunk];
            MessageDigest sha = MessageDigest.getInstance("SHA-256");
            SplittableRandom random = new SplittableRandom();
            long sent = 0;
            long chunks = 0;
            ByteBuffer last = null;
            while (sent < size) {
                int n = (int) Math.min(chunk, size - sent);
                random.nextBytes(bytes);
                sha.update(bytes, 0, n);
                buffer.clear();
                buffer.put(bytes, 0, n).flip();
                peer.put(buffer, region, 0);
                SessionProtocol.writeNotification(peer, n);
                sent += n;
                chunks++;
                last = ExchangeResult.expectOk(peer, "write to " + peer.peerName() + " after " + sent + " bytes")
                        .body();
                if (last.remaining() < 8 || last.getLong(0) != sent) {
                    throw new CommunicatorException("write: the server acknowledged "
                            + (last.remaining() < 8 ? "nothing" : last.getLong(0) + " bytes") + " after " + sent
                            + " bytes were placed");
                }
            }
            byte[] ours = sha.digest();
            if (last.remaining() != 8 + ours.length) {
                throw new CommunicatorException("write: the server's final result has " + last.remaining()
                        + " bytes, expected " + (8 + ours.length) + " (count and SHA-256)");
            }
            byte[] theirs = new byte[ours.length];
            last.position(8).get(theirs);
            String hex = HexFormat.of().formatHex(theirs);
            if (!Arrays.equals(ours, theirs)) {
                throw new CommunicatorException("write: the server's SHA-256 " + hex + " differs from the "
                        + HexFormat.of().formatHex(ours) + " of the bytes sent");
            }
            spec.commandLine().getOut().printf(Locale.ROOT, "write: %d bytes put one-sided in %d chunk%s into the"
                    + " server's %d-byte region; server SHA-256 %s, matching%n", size, chunks, chunks == 1 ? "" : "s",
                    region.length(), hex);
            spec.commandLine().getOut().flush();
        }
        return 0;
    }
}
