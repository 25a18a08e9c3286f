package io.rdmacomm.session;

import io.rdmacomm.api.Access;
import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.MemoryRegion;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.EnumSet;

/**
 * {@link Exchange#READ}, the seed's one-sided read mode: the server registers a region of {@code regionSize} bytes
 * filled with {@link SessionProtocol#patternByte the pattern} for {@link Access#REMOTE_READ}, advertises its
 * descriptor (the body of the result) and keeps it registered until the client sends
 * {@link SessionProtocol#READ_DONE_MAGIC read done}; the client gets whatever ranges it likes meanwhile. The server
 * then deregisters the region and answers with an empty result, so that the deregistration happens while the
 * client is still connected (on RDMA the client's side takes part in it). Every session registers the same pattern memory, filled once: the region is read-only
 * for clients, so they cannot disturb each other.
 */
final class ReadHandler implements ExchangeHandler {
    private final ByteBuffer pattern;

    ReadHandler(int regionSize) {
        pattern = ByteBuffer.allocateDirect(regionSize);
        for (int i = 0; i < regionSize; i++) {
            pattern.put(i, SessionProtocol.patternByte(i));
        }
    }

    @Override
    public void run(Communicator peer, SessionRequest request) throws IOException {
        MemoryRegion region = Regions.register(peer, pattern.duplicate(), EnumSet.of(Access.REMOTE_READ));
        if (region == null) {
            return;
        }
        ByteBuffer done = ByteBuffer.allocate(4);
        try (region) {
            ExchangeResult.ok(ByteBuffer.wrap(region.descriptor().toBytes())).send(peer);
            if (!HandlerSupport.readFrame(peer, done, "READ done")) {
                return;
            }
        }
        if (done.getInt(0) != SessionProtocol.READ_DONE_MAGIC) {
            HandlerSupport.report(peer, ExchangeResult.error(SessionStatus.BAD_FRAME, "expected read done (magic "
                    + SessionProtocol.hex(SessionProtocol.READ_DONE_MAGIC) + "), got "
                    + SessionProtocol.hex(done.getInt(0))));
            return;
        }
        ExchangeResult.ok(ByteBuffer.allocate(0)).send(peer);
        HandlerSupport.awaitEndOfStream(peer);
    }
}
