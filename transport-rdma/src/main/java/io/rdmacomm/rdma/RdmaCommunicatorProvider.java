package io.rdmacomm.rdma;

import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.CommunicatorProvider;
import io.rdmacomm.api.Endpoint;
import io.rdmacomm.api.EndpointOption;
import io.rdmacomm.rdma.spi.RdmaProvider;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.ServiceConfigurationError;
import java.util.ServiceLoader;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@code rdma://} scheme. The endpoint option {@code provider} names an RDMA provider, which runs whatever its
 * {@link RdmaProvider#priority() priority}, or a wire family ({@code ucx}, the default), which runs on the
 * {@link RdmaProvider#isAvailable() available} provider of that family with the highest priority, or, if none is
 * available, on its lowest (the last resort, whose cause the user is then told). The UCX providers rank
 * {@code ucx-ffm} (JDK 22+) above {@code ucx-jucx}.
 */
public final class RdmaCommunicatorProvider implements CommunicatorProvider {
    private static final Logger LOG = LoggerFactory.getLogger(RdmaCommunicatorProvider.class);
    /** Unloadable provider entries tolerated before the search gives up (a broken iterator could fail forever). */
    private static final int MAX_UNLOADABLE = 16;
    /** Highest priority first; of equal priorities, the first by name. */
    private static final Comparator<RdmaProvider> RANK = Comparator.comparingInt(RdmaProvider::priority).reversed()
            .thenComparing(RdmaProvider::name);
    /**
     * Choices already logged at INFO, notices given and unloadable providers already warned of, so that a server with
     * 256 clients says it once.
     */
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
        boolean byFamily = !all.containsKey(name);
        List<RdmaProvider> outranked = byFamily ? outranked(p, all) : List.of();
        if (LOGGED.putIfAbsent(name + "->" + p.name(), Boolean.TRUE) == null) {
            LOG.info("rdma:// provider={} runs on {}{}", name, p.name(), whyNotHigher(outranked));
        }
        if (byFamily && LOGGED.putIfAbsent("notice " + p.name(), Boolean.TRUE) == null) {
            p.familyChoiceNotice(outranked).ifPresent(LOG::warn);
        }
        return new RdmaCommunicator(endpoint, p);
    }

    /**
     * The bootstrap socket, which a connection holds for its life, and what the provider the endpoint resolves to
     * holds per channel (measured: {@code DescriptorsPerConnectionContractTest}).
     */
    @Override
    public int descriptorsPerConnection(Endpoint endpoint) {
        RdmaProvider p = providerOf(endpoint);
        return p == null ? CommunicatorProvider.super.descriptorsPerConnection(endpoint)
                : 1 + p.descriptorsPerChannel();
    }

    /** What the provider the endpoint resolves to holds per peer process. */
    @Override
    public int descriptorsPerPeerProcess(Endpoint endpoint) {
        RdmaProvider p = providerOf(endpoint);
        return p == null ? 0 : p.descriptorsPerPeer();
    }

    /** What the provider the endpoint resolves to holds however many connections there are. */
    @Override
    public int descriptorsShared(Endpoint endpoint) {
        RdmaProvider p = providerOf(endpoint);
        return p == null ? 0 : p.descriptorsShared();
    }

    /** The provider {@code endpoint}'s {@code provider} option stands for ({@link #select}), or null. */
    private static RdmaProvider providerOf(Endpoint endpoint) {
        return select(endpoint.string(EndpointOption.PROVIDER), providers());
    }

    /**
     * The provider {@code name} stands for: the one of that name, else the highest-ranked available one of the wire
     * family {@code name}, else that family's lowest-ranked; null if there is none of either on the class path.
     */
    static RdmaProvider select(String name, Map<String, RdmaProvider> all) {
        RdmaProvider named = all.get(name);
        if (named != null) {
            return named;
        }
        List<RdmaProvider> family = family(name, all);
        for (RdmaProvider p : family) {
            if (p.isAvailable()) {
                return p;
            }
        }
        return family.isEmpty() ? null : family.get(family.size() - 1);
    }

    /** The providers of wire family {@code family}, highest ranked first. */
    static List<RdmaProvider> family(String family, Map<String, RdmaProvider> all) {
        List<RdmaProvider> members = new ArrayList<>();
        for (RdmaProvider p : all.values()) {
            if (p.wireFamily().equals(family)) {
                members.add(p);
            }
        }
        members.sort(RANK);
        return members;
    }

    /** The providers of {@code chosen}'s family ranked above it: those its family's choice passed over. */
    private static List<RdmaProvider> outranked(RdmaProvider chosen, Map<String, RdmaProvider> all) {
        List<RdmaProvider> family = family(chosen.wireFamily(), all);
        return family.subList(0, family.indexOf(chosen));
    }

    /** For the log: why the family's choice passed over the providers ranked above the chosen one. */
    private static String whyNotHigher(List<RdmaProvider> outranked) {
        StringBuilder why = new StringBuilder();
        for (RdmaProvider p : outranked) {
            why.append(" (").append(p.name()).append(" cannot run here: ")
                    .append(p.unavailabilityCause().orElse("(no cause given)")).append(')');
        }
        return why.toString();
    }

    /** What the user is told when {@code name} names neither a provider nor a family on the class path. */
    static String missing(String name, Map<String, RdmaProvider> all) {
        for (RdmaProvider p : all.values()) {
            Optional<String> cause = p.absenceCause(name);
            if (cause.isPresent()) {
                return "no RDMA provider " + name + " on the class path: " + cause.get() + "; available: "
                        + all.keySet();
            }
        }
        return "no RDMA provider named '" + name + "', nor one of that wire family, on the class path; available: "
                + all.keySet();
    }

    /** The providers, looked up once: a ServiceLoader lookup reads every jar's service file, per connection before. */
    private static volatile Map<String, RdmaProvider> found;

    static Map<String, RdmaProvider> providers() {
        Map<String, RdmaProvider> all = found;
        if (all == null) {
            all = Collections.unmodifiableMap(providers(ServiceLoader.load(RdmaProvider.class,
                    RdmaProvider.class.getClassLoader()).iterator()));
            found = all;
        }
        return all;
    }

    /**
     * The providers {@code found} yields, by name. One that cannot be loaded is skipped with a warning rather than
     * failing every rdma:// endpoint: a provider's jar built for JDK 22+ on a JDK 17 class path throws
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
                // once per process and cause: every rdma:// endpoint looks the providers up again. A jar for a later
                // JDK (ucx-ffm's, built by JDK 22+, on JDK 17) is expected there, and the notice of the provider its
                // family runs on instead says what it means: INFO
                if (LOGGED.putIfAbsent("unloadable " + e, Boolean.TRUE) == null) {
                    String message = "an RDMA provider on the class path cannot be loaded by this JVM (Java {}),"
                            + " skipped: {}";
                    if (e instanceof UnsupportedClassVersionError) {
                        LOG.info(message, Runtime.version().feature(), e.toString());
                    } else {
                        LOG.warn(message, Runtime.version().feature(), e.toString());
                    }
                }
            }
        }
        return byName;
    }
}
