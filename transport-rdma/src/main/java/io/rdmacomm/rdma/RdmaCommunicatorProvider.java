package io.rdmacomm.rdma;

import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.CommunicatorProvider;
import io.rdmacomm.api.Endpoint;
import io.rdmacomm.api.EndpointOption;
import io.rdmacomm.rdma.spi.RdmaProvider;
import java.util.Iterator;
import java.util.Map;
import java.util.Optional;
import java.util.ServiceConfigurationError;
import java.util.ServiceLoader;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@code rdma://} scheme; the RDMA provider is chosen by the endpoint option {@code provider}. {@code ucx} (the
 * default) is {@code ucx-ffm} wherever that one can run (on the class path, JDK 22+, native access enabled, libucp
 * loadable) and {@code ucx-jucx} otherwise; every other name forces that provider.
 */
public final class RdmaCommunicatorProvider implements CommunicatorProvider {
    private static final Logger LOG = LoggerFactory.getLogger(RdmaCommunicatorProvider.class);
    /** Unloadable provider entries tolerated before the search gives up (a broken iterator could fail forever). */
    private static final int MAX_UNLOADABLE = 16;
    static final String UCX = "ucx";
    static final String UCX_FFM = "ucx-ffm";
    static final String UCX_JUCX = "ucx-jucx";
    /** Choices already logged at INFO, so that a server with 256 clients says it once. */
    private static final Map<String, Boolean> LOGGED = new ConcurrentHashMap<>();

    @Override
    public String scheme() {
        return "rdma";
    }

    @Override
    public Optional<String> unavailabilityCause(Endpoint endpoint) {
        String name = endpoint.string(EndpointOption.PROVIDER);
        Map<String, RdmaProvider> all = providers();
        RdmaProvider p = select(name, all);
        if (p == null) {
            return Optional.of(missing(name, all));
        }
        return p.unavailabilityCause().map(c -> "provider " + p.name() + " cannot run here: " + c);
    }

    @Override
    public Communicator open(Endpoint endpoint) {
        String name = endpoint.string(EndpointOption.PROVIDER);
        Map<String, RdmaProvider> all = providers();
        RdmaProvider p = select(name, all);
        if (p == null) {
            throw new IllegalStateException(endpoint + ": " + missing(name, all));
        }
        if (LOGGED.putIfAbsent(name + "->" + p.name(), Boolean.TRUE) == null) {
            LOG.info("rdma:// provider={} runs on {}{}", name, p.name(), whyNotFfm(name, all));
        }
        return new RdmaCommunicator(endpoint, p);
    }

    /**
     * The bootstrap socket, which a connection holds for its life, and what the provider the endpoint resolves to
     * holds per channel (measured: {@code DescriptorsPerConnectionContractTest}).
     */
    @Override
    public int descriptorsPerConnection(Endpoint endpoint) {
        RdmaProvider p = select(endpoint.string(EndpointOption.PROVIDER), providers());
        return p == null ? CommunicatorProvider.super.descriptorsPerConnection(endpoint)
                : 1 + p.descriptorsPerChannel();
    }

    /** The provider {@code name} stands for, or null if none of that name is on the class path. */
    static RdmaProvider select(String name, Map<String, RdmaProvider> all) {
        if (!name.equals(UCX)) {
            return all.get(name);
        }
        RdmaProvider ffm = all.get(UCX_FFM);
        if (ffm != null && ffm.unavailabilityCause().isEmpty()) {
            return ffm;
        }
        RdmaProvider jucx = all.get(UCX_JUCX);
        return jucx != null ? jucx : ffm;
    }

    /** For the log: why provider=ucx did not pick ucx-ffm. */
    private static String whyNotFfm(String name, Map<String, RdmaProvider> all) {
        if (!name.equals(UCX)) {
            return "";
        }
        RdmaProvider ffm = all.get(UCX_FFM);
        if (ffm == null) {
            return " (ucx-ffm is not on the class path: " + ffmRequirement() + ")";
        }
        return ffm.unavailabilityCause().map(c -> " (ucx-ffm cannot run here: " + c + ")").orElse("");
    }

    private static String missing(String name, Map<String, RdmaProvider> all) {
        if (name.equals(UCX_FFM) || (name.equals(UCX) && !all.containsKey(UCX_JUCX))) {
            return "no RDMA provider " + UCX_FFM + " on the class path: " + ffmRequirement() + "; available: "
                    + all.keySet();
        }
        return "no RDMA provider named '" + name + "' on the class path; available: " + all.keySet();
    }

    private static String ffmRequirement() {
        return "it needs JDK 22 or later (this JVM is " + Runtime.version().feature()
                + ") and the module transport-rdma-ucx-ffm";
    }

    static Map<String, RdmaProvider> providers() {
        return providers(ServiceLoader.load(RdmaProvider.class, RdmaProvider.class.getClassLoader()).iterator());
    }

    /**
     * The providers {@code found} yields, by name. One that cannot be loaded is skipped with a warning rather than
     * failing every rdma:// endpoint: a {@code ucx-ffm} jar built for JDK 22+ on a JDK 17 class path throws
     * {@link UnsupportedClassVersionError} from the service loader's iterator.
     */
    static Map<String, RdmaProvider> providers(Iterator<RdmaProvider> found) {
        Map<String, RdmaProvider> byName = new TreeMap<>();
        for (int failures = 0; failures <= MAX_UNLOADABLE; ) {
            try {
                if (!found.hasNext()) {
                    break;
                }
                RdmaProvider p = found.next();
                byName.putIfAbsent(p.name(), p);
            } catch (ServiceConfigurationError | LinkageError e) {
                failures++;
                LOG.warn("an RDMA provider on the class path cannot be loaded by this JVM (Java {}), skipped: {}",
                        Runtime.version().feature(), e.toString());
            }
        }
        return byName;
    }
}
