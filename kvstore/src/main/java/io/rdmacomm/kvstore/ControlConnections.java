package io.rdmacomm.kvstore;

import io.grpc.Attributes;
import io.grpc.ServerTransportFilter;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Counts the control plane's live connections (gRPC transports) so that a session past
 * {@link KvServerConfig#maxControlConnections()} is refused: each holds a descriptor, and the server's descriptor
 * budget holds one per client process beside a data connection per session.
 */
final class ControlConnections extends ServerTransportFilter {
    private static final Attributes.Key<Boolean> COUNTED = Attributes.Key.create("rdmacomm.kv.counted");

    private final AtomicInteger live = new AtomicInteger();
    private final int max;

    ControlConnections(int max) {
        this.max = max;
    }

    @Override
    public Attributes transportReady(Attributes attributes) {
        live.incrementAndGet();
        return attributes.toBuilder().set(COUNTED, Boolean.TRUE).build();
    }

    @Override
    public void transportTerminated(Attributes attributes) {
        // a transport that never became ready was not counted
        if (attributes != null && Boolean.TRUE.equals(attributes.get(COUNTED))) {
            live.decrementAndGet();
        }
    }

    /**
     * Refuses a new session while more control connections are open than the server may hold (the one asking
     * counts itself).
     */
    void checkRoom() throws KvException {
        int n = live.get();
        if (n > max) {
            throw new KvException(KvException.Code.BUSY, "this server holds " + n + " control-plane connections,"
                    + " more than its maximum of " + max + " (from its descriptor limit; ulimit -n): the sessions of"
                    + " one client process can share one (KvClient.connect(KvControlClient, ...))");
        }
    }
}
