package io.rdmacomm.session;

import io.rdmacomm.api.Access;
import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.MemoryRegion;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Set;

/** Registration of the regions the exchanges advertise, with the failure reported to the client. */
final class Regions {
    private Regions() {
    }

    /**
     * Registers {@code memory} with {@code peer}, or tells the client why that failed.
     *
     * @return the region, or {@code null} when it could not be registered and the session should end
     */
    static MemoryRegion register(Communicator peer, ByteBuffer memory, Set<Access> access) {
        try {
            return peer.register(memory, access);
        } catch (IOException | UnsupportedOperationException | IllegalArgumentException e) {
            HandlerSupport.report(peer, ExchangeResult.error(SessionStatus.FAILED, "the server cannot register a"
                    + " region of " + memory.remaining() + " bytes for " + access + ": " + (e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage())));
            return null;
        }
    }
}
