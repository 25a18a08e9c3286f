package io.rdmacomm.tcp;

import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.CommunicatorProvider;
import io.rdmacomm.api.Endpoint;
import java.util.Optional;

/** The {@code tcp://} transport; always available. */
public final class TcpCommunicatorProvider implements CommunicatorProvider {

    @Override
    public String scheme() {
        return "tcp";
    }

    @Override
    public Optional<String> unavailabilityCause(Endpoint endpoint) {
        return Optional.empty();
    }

    @Override
    public Communicator open(Endpoint endpoint) {
        if (!endpoint.scheme().equals("tcp")) {
            throw new IllegalArgumentException("endpoint " + endpoint + " is not tcp://");
        }
        return new TcpCommunicator(endpoint);
    }
}
