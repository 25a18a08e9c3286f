package io.rdmacomm.session;

import io.rdmacomm.api.Access;
import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.MemoryRegion;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.EnumSet;

/**
 * {@link Exchange#WRITE}, the seed's one-sided write mode: the server registers a region of
 * {@code min(regionSize, total)} bytes for {@link Access#REMOTE_WRITE} and advertises its descriptor (the body of
 * the first result). The client then repeats, until the total is placed: put a chunk of at most the region's length
 * at offset 0, send a {@link SessionProtocol#WRITE_NOTIFY_MAGIC write notification} with the chunk's length, and
 * wait for the server's result (body {@code long bytes so far}), after which the region may be reused. The last
 * chunk's result carries {@code long total | 32-byte SHA-256} of everything placed; the region is deregistered
 * before that last result goes out, while the client still waits for it.
 */
final class WriteHandler implements ExchangeHandler {
    private final int regionSize;

    WriteHandler(int regionSize) {
        this.regionSize = regionSize;
    }

    @Override
    public void run(Communicator peer, SessionRequest request) throws IOException {
        long total = request.writeTotal();
        int size = (int) Math.min(regionSize, total);
        MemoryRegion region = Regions.register(peer, ByteBuffer.allocateDirect(size), EnumSet.of(Access.REMOTE_WRITE));
        if (region == null) {
            return;
        }
        ExchangeResult last;
        try (region) {
            ExchangeResult.ok(ByteBuffer.wrap(region.descriptor().toBytes())).send(peer);
            last = receive(peer, region, size, total);
        }
        if (last == null) {
            return;
        }
        if (last.status() == SessionStatus.OK) {
            last.send(peer);
            HandlerSupport.awaitEndOfStream(peer);
        } else {
            HandlerSupport.report(peer, last);
        }
    }

    /**
     * Takes the chunks until the total has arrived; returns the last result to send (OK with the checksum, or
     * an error), or {@code null} when the stream ended and the client has been told.
     */
    private static ExchangeResult receive(Communicator peer, MemoryRegion region, int size, long total)
            throws IOException {
        MessageDigest sha = sha256();
        ByteBuffer notice = ByteBuffer.allocate(SessionProtocol.WRITE_NOTIFY_LENGTH);
        long received = 0;
        while (true) {
            notice.clear();
            if (!HandlerSupport.readFrame(peer, notice, "write notification after " + received + " of " + total
                    + " bytes")) {
                return null;
            }
            int magic = notice.getInt(0);
            int n = notice.getInt(4);
            if (magic != SessionProtocol.WRITE_NOTIFY_MAGIC) {
                return ExchangeResult.error(SessionStatus.BAD_FRAME, "expected a write notification (magic "
                        + SessionProtocol.hex(SessionProtocol.WRITE_NOTIFY_MAGIC) + "), got "
                        + SessionProtocol.hex(magic));
            }
            if (n < 1 || n > size || n > total - received) {
                return ExchangeResult.error(SessionStatus.BAD_FRAME, "write notification announces "
                        + Integer.toUnsignedString(n) + " bytes; the region holds " + size + " and "
                        + (total - received) + " of the " + total + " announced remain");
            }
            sha.update(region.buffer().duplicate().limit(n));
            received += n;
            if (received == total) {
                return ExchangeResult.ok(ByteBuffer.allocate(8 + 32).putLong(received).put(sha.digest()).flip());
            }
            ExchangeResult.ok(ByteBuffer.allocate(8).putLong(received).flip()).send(peer);
        }
    }

    static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JDK has SHA-256", e);
        }
    }
}
