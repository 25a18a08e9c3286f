package io.rdmacomm.rdma.spi;

import java.io.File;
import java.util.Arrays;
import java.util.Locale;
import java.util.Set;

/**
 * What the UCX providers ({@code ucx-jucx}, {@code ucx-ffm}) read from {@code UCX_TLS} and the host to choose
 * their data path: shared by both so that they choose alike.
 */
public final class UcxTransports {
    /** Transports with a fast one-sided put; any of them in UCX_TLS means the put path. */
    private static final Set<String> PUT_CAPABLE = Set.of("all", "sm", "shm", "posix", "sysv", "cma", "knem",
            "xpmem", "rc", "rc_v", "rc_x", "rc_mlx5", "ud", "ud_v", "ud_x", "ud_mlx5", "dc", "dc_x", "dc_mlx5",
            "ib", "mm", "rocm", "cuda");

    private UcxTransports() {
    }

    /**
     * Whether writes should carry their payload inside the notification's active message instead of put + flush:
     * when UCX_TLS leaves UCX only tcp, whose put is emulated and measured slower than its active messages.
     */
    public static boolean putIsEmulated() {
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
     * the zero-copy path that measured 2 GB/s against 3.5 GB/s through the UCX-allocated ring
     * (transport-rdma/README.md).
     */
    public static boolean rdmaDevicePresent() {
        String[] devices = new File("/sys/class/infiniband").list();
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
