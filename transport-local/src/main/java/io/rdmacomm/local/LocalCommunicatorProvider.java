package io.rdmacomm.local;

import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.CommunicatorProvider;
import io.rdmacomm.api.Endpoint;
import java.util.Optional;

/** The {@code local://} transport's provider; it runs wherever the JVM does. */
public final class LocalCommunicatorProvider implements CommunicatorProvider {
    @Override
    public String scheme() {
        return "local";
    }

    @Override
    public Optional<String> unavailabilityCause(Endpoint endpoint) {
        return Optional.empty();
    }

    @Override
    public Communicator open(Endpoint endpoint) {
        if (!endpoint.scheme().equals("local")) {
            throw new IllegalArgumentException("the local provider cannot open " + endpoint);
        }
        return new LocalCommunicator(endpoint);
    }
}
