package io.rdmacomm.session;

import io.rdmacomm.api.Communicator;
import java.io.IOException;
import java.util.function.Supplier;

/**
 * {@link Exchange#STATS}: the server answers with one result whose body is its {@link ServerStats}, taken while this
 * session is live (so it counts itself), and waits for the client to end the stream.
 */
final class StatsHandler implements ExchangeHandler {
    private final Supplier<ServerStats> stats;

    StatsHandler(Supplier<ServerStats> stats) {
        this.stats = stats;
    }

    @Override
    public void run(Communicator peer, SessionRequest request) throws IOException {
        ExchangeResult.ok(stats.get().encode()).send(peer);
        HandlerSupport.awaitEndOfStream(peer);
    }
}
