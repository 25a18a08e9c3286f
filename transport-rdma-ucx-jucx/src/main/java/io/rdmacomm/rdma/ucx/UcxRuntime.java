package io.rdmacomm.rdma.ucx;

import java.util.Optional;
import org.openucx.jucx.ucp.UcpContext;
import org.openucx.jucx.ucp.UcpParams;

/** The process-wide UCP context, created on first use and destroyed when its last user releases it. */
final class UcxRuntime {
    /**
     * UCS_MEMORY_TYPE_HOST, passed to every call that takes a memory type: JUCX's ByteBuffer overloads pass a
     * compiled-in "unknown" type that libucp 1.13 misreads.
     */
    static final int HOST_MEMORY = 0;
    private static Optional<String> cause;
    private static UcpContext context;
    private static int users;

    private UcxRuntime() {
    }

    /** Why JUCX cannot run here, probed once by loading libjucx (which links libucp.so.0). */
    static synchronized Optional<String> unavailabilityCause() {
        if (cause == null) {
            try {
                Class.forName("org.openucx.jucx.ucp.UcpContext", true, UcxRuntime.class.getClassLoader());
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

    static synchronized UcpContext acquire() {
        if (context == null) {
            context = new UcpContext(new UcpParams().requestAmFeature().requestRmaFeature().requestWakeupFeature()
                    .setMtWorkersShared(true));
        }
        users++;
        return context;
    }

    static synchronized void release() {
        if (--users == 0) {
            context.close();
            context = null;
        }
    }
}
