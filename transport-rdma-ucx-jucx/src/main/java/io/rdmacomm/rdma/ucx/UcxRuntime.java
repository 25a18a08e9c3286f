package io.rdmacomm.rdma.ucx;

import java.util.Arrays;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import org.openucx.jucx.ucp.UcpContext;
import org.openucx.jucx.ucp.UcpParams;

/** The process-wide UCP context, created on first use and destroyed when its last user releases it. */
final class UcxRuntime {
    /**
     * UCS_MEMORY_TYPE_HOST, passed to every call that takes a memory type: JUCX's ByteBuffer overloads pass a
     * compiled-in "unknown" type that libucp 1.13 misreads.
     */
    static final int HOST_MEMORY = 0;
    /** Transports with a fast one-sided put; any of them in UCX_TLS means the put path. */
    private static final Set<String> PUT_CAPABLE = Set.of("all", "sm", "shm", "posix", "sysv", "cma", "knem",
            "xpmem", "rc", "rc_v", "rc_x", "rc_mlx5", "ud", "ud_v", "ud_x", "ud_mlx5", "dc", "dc_x", "dc_mlx5",
            "ib", "mm", "rocm", "cuda");
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

    /**
     * Whether writes carry their payload inside the notification's active message instead of put + flush: when
     * UCX_TLS leaves UCX only tcp, whose put is emulated and measured slower than its active messages.
     */
    static boolean eagerWrites() {
        String tls = System.getenv("UCX_TLS");
        if (tls == null || tls.isBlank()) {
            return false;
        }
        String[] names = tls.toLowerCase(Locale.ROOT).replace("^", "").split(",");
        boolean negated = tls.trim().startsWith("^");
        return !negated && Arrays.stream(names).map(String::trim).noneMatch(PUT_CAPABLE::contains)
                && Arrays.stream(names).map(String::trim).anyMatch(n -> n.equals("tcp"));
    }

    /**
     * Whether UCX may use an RDMA device here: one is listed under /sys/class/infiniband and UCX_TLS, if set, does
     * not leave only non-RDMA transports. On shared memory (and tcp), UCX 1.13 has no registration key for cma, so
     * a put into application memory registered with ucp_mem_map is emulated through the target's progress: for
     * the zero-copy path that measured 2 GB/s against 3.5 GB/s through the UCX-allocated ring (README).
     */
    static boolean rdmaDevicePresent() {
        String[] devices = new java.io.File("/sys/class/infiniband").list();
        if (devices == null || devices.length == 0) {
            return false;
        }
        String tls = System.getenv("UCX_TLS");
        if (tls == null || tls.isBlank() || tls.trim().startsWith("^")) {
            return true;
        }
        return Arrays.stream(tls.toLowerCase(Locale.ROOT).split(",")).map(String::trim)
                .anyMatch(n -> n.equals("all") || n.startsWith("rc") || n.startsWith("ud") || n.startsWith("dc")
                        || n.equals("ib"));
    }
}
