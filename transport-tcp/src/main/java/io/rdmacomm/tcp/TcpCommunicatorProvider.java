package io.rdmacomm.tcp;

import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.CommunicatorProvider;
import io.rdmacomm.api.Endpoint;
import io.rdmacomm.api.EndpointOption;
import java.util.Optional;

/** The {@code tcp://} transport (framed, or a plain byte stream with {@code wire=raw}); always available. */
public final class TcpCommunicatorProvider implements CommunicatorProvider {

    @Override
    public String scheme() {
        return "tcp";
    }

    @Override
    public Optional<String> unavailabilityCause(Endpoint endpoint) {
        return Optional.empty();
    }

    /**
     * One: an accepted tcp:// connection holds its socket and nothing else, in every mode (blocking channels wait in
     * the socket itself; non-blocking ones on the process's one readiness selector, see {@link Readiness}).
     */
    @Override
    public int descriptorsPerConnection(Endpoint endpoint) {
        return 1;
    }

    @Override
    public Communicator open(Endpoint endpoint) {
        if (!endpoint.scheme().equals("tcp")) {
            throw new IllegalArgumentException("endpoint " + endpoint + " is not tcp://");
        }
        return endpoint.string(EndpointOption.WIRE).equals("raw") ? new RawTcpCommunicator(endpoint)
                : new TcpCommunicator(endpoint);
    }
}
