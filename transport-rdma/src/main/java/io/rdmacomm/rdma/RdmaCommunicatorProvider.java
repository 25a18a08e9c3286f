package io.rdmacomm.rdma;

import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.CommunicatorProvider;
import io.rdmacomm.api.Endpoint;
import io.rdmacomm.api.EndpointOption;
import io.rdmacomm.rdma.spi.RdmaProvider;
import java.util.Map;
import java.util.Optional;
import java.util.ServiceLoader;
import java.util.TreeMap;

/** The {@code rdma://} scheme; the RDMA provider is chosen by the endpoint option {@code provider}. */
public final class RdmaCommunicatorProvider implements CommunicatorProvider {

    @Override
    public String scheme() {
        return "rdma";
    }

    @Override
    public Optional<String> unavailabilityCause(Endpoint endpoint) {
        String name = endpoint.string(EndpointOption.PROVIDER);
        RdmaProvider p = providers().get(name);
        if (p == null) {
            return Optional.of("no RDMA provider named '" + name + "' on the class path; available: "
                    + providers().keySet());
        }
        return p.unavailabilityCause();
    }

    @Override
    public Communicator open(Endpoint endpoint) {
        String name = endpoint.string(EndpointOption.PROVIDER);
        RdmaProvider p = providers().get(name);
        if (p == null) {
            throw new IllegalStateException(endpoint + ": " + unavailabilityCause(endpoint).orElse(name));
        }
        return new RdmaCommunicator(endpoint, p);
    }

    static Map<String, RdmaProvider> providers() {
        Map<String, RdmaProvider> byName = new TreeMap<>();
        for (RdmaProvider p : ServiceLoader.load(RdmaProvider.class, RdmaProvider.class.getClassLoader())) {
            byName.putIfAbsent(p.name(), p);
        }
        return byName;
    }
}
