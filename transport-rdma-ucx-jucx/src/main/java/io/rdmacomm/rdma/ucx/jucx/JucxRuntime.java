package io.rdmacomm.rdma.ucx.jucx;

import io.rdmacomm.rdma.ucx.UcxTransports;
import java.util.Optional;
import org.openucx.jucx.ucp.UcpContext;
import org.openucx.jucx.ucp.UcpEndpointParams;
import org.openucx.jucx.ucp.UcpParams;

/** What the provider asks of the system's UCX: whether it loads, the context of a node, transport choices. */
final class JucxRuntime {
    /**
     * UCS_MEMORY_TYPE_HOST, passed to every call that takes a memory type: JUCX's ByteBuffer overloads pass a
     * compiled-in "unknown" type that libucp 1.13 misreads.
     */
    static final int HOST_MEMORY = 0;
    private static Optional<String> cause;

    private JucxRuntime() {
    }

    /** Why JUCX cannot run here, probed once by loading libjucx (which links libucp.so.0). */
    static synchronized Optional<String> unavailabilityCause() {
        if (cause == null) {
            try {
                Class.forName("org.openucx.jucx.ucp.UcpContext", true, JucxRuntime.class.getClassLoader());
                cause = Optional.empty();
            } catch (LinkageError | ClassNotFoundException e) {
                cause = Optional.of(describe(e));
            }
        }
        return cause;
    }

    static String describe(Throwable e) {
        Throwable root = e;
        while (root.getCause() != null) {
            root = root.getCause();
        }
        String detail = String.valueOf(root.getMessage());
        if (root instanceof ClassNotFoundException) {
            return "the JUCX library (org.openucx:jucx) is not on the class path";
        }
        return "libucx is not installed or cannot be loaded (" + detail + "); install it with"
                + " `apt-get install libucx0` (Debian/Ubuntu; JUCX 1.12.1 needs libucp.so.0)";
    }

    /**
     * A new UCP context, on {@code netDevices} (UCX_NET_DEVICES) unless null. Endpoints of its workers are created
     * from worker addresses only. Without RMA where one-sided access is withheld from peers (see
     * {@link UcxTransports#oneSidedWithheld(boolean)} and {@link UcxTransports#contextConfig}).
     */
    static UcpContext newContext(String netDevices, boolean withheld) {
        UcpParams p = new UcpParams().requestAmFeature().requestWakeupFeature().setMtWorkersShared(true);
        if (!withheld) {
            p.requestRmaFeature();
        }
        UcxTransports.contextConfig(netDevices, withheld).forEach(p::setConfig);
        return new UcpContext(p);
    }

    /**
     * Endpoints in UCX's default error mode, not peer mode: libucx 1.13 gives a peer-mode endpoint only transports
     * that report peer failure, which leaves out shared memory (sysv/posix active messages, cma put). A vanished
     * peer is detected by the engine's bootstrap socket; the endpoint's error handler reports what UCX notices.
     */
    static UcpEndpointParams endpointParams() {
        return new UcpEndpointParams();
    }
}
