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

    @Override
    public Communicator open(Endpoint endpoint) {
        if (!endpoint.scheme().equals("tcp")) {
            throw new IllegalArgumentException("endpoint " + endpoint + " is not tcp://");
        }
        return endpoint.string(EndpointOption.WIRE).equals("raw") ? new RawTcpCommunicator(endpoint)
                : new TcpCommunicator(endpoint);
    }
}
