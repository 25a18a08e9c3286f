package io.rdmacomm.rdma;

import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.CommunicatorProvider;
import io.rdmacomm.api.Endpoint;
import io.rdmacomm.api.EndpointOption;
import io.rdmacomm.rdma.spi.RdmaProvider;
import java.util.Collections;
import java.util.Iterator;
import java.util.Map;
import java.util.Optional;
import java.util.ServiceConfigurationError;
import java.util.ServiceLoader;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
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
    /**
     * Choices already logged at INFO, and unloadable providers already warned of, so that a server with 256 clients
     * says it once.
     */
    private static final Map<String, Boolean> LOGGED = new ConcurrentHashMap<>();
    /** Whether the notice that provider=ucx fell back to ucx-jucx was given: once per process. */
    private static final AtomicBoolean JUCX_NOTICE_GIVEN = new AtomicBoolean();
    /**
     * System property: the command that rebuilds this installation with the running JDK, for the notice (the
     * launchers in bin/ set it; without it the notice names the Maven command with this JVM's home).
     */
    static final String REBUILD_PROPERTY = "rdmacomm.rebuild";

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
        if (name.equals(UCX) && p.name().equals(UCX_JUCX) && JUCX_NOTICE_GIVEN.compareAndSet(false, true)) {
            LOG.warn(jucxNotice(all.get(UCX_FFM), Runtime.version().feature(), System.getProperty("java.home"),
                    System.getProperty(REBUILD_PROPERTY)));
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

    /**
     * The one-time notice that provider=ucx (the default) runs on ucx-jucx: what that costs, why ucx-ffm was not
     * chosen, and how to get it. Not given when the user forced provider=ucx-jucx.
     */
    static String jucxNotice(RdmaProvider ffm, int feature, String javaHome, String rebuild) {
        String why;
        if (feature < 22) {
            why = "ucx-ffm needs JDK 22 or later and this JVM is " + feature + "; run on a JDK 22+ (25 recommended),"
                    + " e.g. JAVA_HOME=/usr/lib/jvm/<jdk-25> (bin/servercomm, bin/clientcomm and bin/kv-* pick the"
                    + " newest JDK installed when JAVA_HOME is unset)";
        } else if (ffm == null) {
            why = "this JVM (" + feature + ") can run ucx-ffm but it is not on the class path (module"
                    + " transport-rdma-ucx-ffm, which a build by JDK 17-21 leaves out); rebuild with this JDK: "
                    + (rebuild != null && !rebuild.isBlank() ? rebuild
                            : "JAVA_HOME=" + javaHome + " ./mvnw -q -DskipTests package");
        } else {
            why = "ucx-ffm cannot run here: " + ffm.unavailabilityCause().orElse("(no cause given)");
        }
        return "rdma:// runs on ucx-jucx, the slower UCX provider (8 B round trips about 6 x those of ucx-ffm on"
                + " shared memory, and JUCX 1.12.1 keeps every completed request, so a busy process's heap grows): "
                + why + "; provider=ucx-jucx chooses it without this notice";
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
                // once per process and cause: every rdma:// endpoint looks the providers up again. A jar for a later
                // JDK (ucx-ffm's, built by JDK 22+, on JDK 17) is expected there, and the notice of the ucx-jucx
                // fallback says what it means: INFO
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
