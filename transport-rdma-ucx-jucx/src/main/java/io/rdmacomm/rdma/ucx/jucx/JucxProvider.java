package io.rdmacomm.rdma.ucx.jucx;

import io.rdmacomm.rdma.spi.RdmaProvider;
import io.rdmacomm.rdma.ucx.NodeRegistry;
import io.rdmacomm.rdma.ucx.UcxProvider;
import java.util.List;
import java.util.Optional;

/**
 * The {@code ucx-jucx} RDMA provider, which {@code provider=ucx} selects where {@code ucx-ffm} cannot run (it ranks
 * below it): JUCX over the system's libucx, using whatever UCX finds (InfiniBand/RoCE verbs, shared memory, tcp;
 * restrict it with {@code UCX_TLS}). One node ({@link JucxNode}: context, worker, progress thread) per interface, side
 * (client, server) and process, shared by all connections of that side ({@link UcxProvider}).
 */
public final class JucxProvider extends UcxProvider<JucxNode> {
    /**
     * The process's nodes by side and UCX_NET_DEVICES value ("" for UCX's choice). One per side, not one for both:
     * with a client and a server in one process on one worker, UCX_TLS=tcp crashed in ucp_am_send_nbx (SIGSEGV,
     * contract kit's 64 peers), and the self transport's messages did not wake the sleeping worker.
     */
    private static final NodeRegistry<JucxNode> NODES = new NodeRegistry<>();
    /**
     * System property: the command that rebuilds this installation with the running JDK, for the notice (the
     * launchers in bin/ set it; without it the notice names the Maven command with this JVM's home).
     */
    static final String REBUILD_PROPERTY = "rdmacomm.rebuild";

    /** A provider; its nodes are the process's, kept in a static registry. */
    public JucxProvider() {
        super(NODES, JucxNode::new, "UCX could not create a worker");
    }

    @Override
    public String name() {
        return JUCX;
    }

    /** The default (5), below ucx-ffm: {@code provider=ucx} runs here where ucx-ffm cannot. */
    @Override
    public int priority() {
        return 5;
    }

    /**
     * The one-time notice that {@code provider=ucx} (the default) runs on ucx-jucx: what that costs, why ucx-ffm
     * ({@code outranked}, or absent) was not chosen, and how to get it. Not given when the user forced
     * {@code provider=ucx-jucx}.
     */
    @Override
    public Optional<String> familyChoiceNotice(List<RdmaProvider> outranked) {
        RdmaProvider ffm = null;
        for (RdmaProvider p : outranked) {
            if (p.name().equals(FFM)) {
                ffm = p;
            }
        }
        return Optional.of(notice(ffm, Runtime.version().feature(), System.getProperty("java.home"),
                System.getProperty(REBUILD_PROPERTY)));
    }

    /**
     * The notice of {@link #familyChoiceNotice}: {@code ffm} the ucx-ffm provider that cannot run (null if absent),
     * on a JVM of feature version {@code feature} at {@code javaHome}; {@code rebuild} the command that rebuilds
     * this installation, if known.
     */
    static String notice(RdmaProvider ffm, int feature, String javaHome, String rebuild) {
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
        return "rdma:// runs on ucx-jucx, the slower UCX provider (8 B round trips about 9 x those of ucx-ffm on"
                + " shared memory, and JUCX 1.12.1 keeps every completed request, so a busy process's heap grows): "
                + why + "; provider=ucx-jucx chooses it without this notice";
    }

    /** None of its own: UCX's sockets are per peer process. */
    @Override
    public int descriptorsPerChannel() {
        return 0;
    }

    /**
     * UCX's sockets to one peer process's worker on its tcp transport (on UCX's default transports too), one each
     * way, shared by all channels to that process ({@code SharedEndpoints}).
     */
    @Override
    public int descriptorsPerPeer() {
        return 2;
    }

    @Override
    public Optional<String> unavailabilityCause() {
        return JucxRuntime.unavailabilityCause();
    }
}
