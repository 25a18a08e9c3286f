package io.rdmacomm.rdma.ucx;

import java.io.File;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * What the UCX providers ({@code ucx-jucx}, {@code ucx-ffm}) read from {@code UCX_TLS} and the host to choose
 * their data path: shared by both so that they choose alike.
 */
public final class UcxTransports {
    /** The configuration key that switches tcp's put off ({@link #contextConfig(String, boolean)}). */
    public static final String TCP_PUT_OFF_KEY = "PUT_ENABLE";

    private UcxTransports() {
    }

    /**
     * Whether a node withholds one-sided access from its peers: wherever UCX may use a transport that does not check
     * remote keys against registered bounds (shared memory, tcp), i.e. unless {@link #onlyRdmaTransports()}. A node
     * that withholds hands out no remote keys, its context has no {@code UCP_FEATURE_RMA} (so UCP's software put/get
     * handlers, which write and read whatever address a peer names, are not installed) and tcp advertises no put
     * ({@link #contextConfig}); writes then travel as {@link UcxWire#AM_WRITE}, which the owner checks and places,
     * and the engine serves gets itself (GET_REQ).
     */
    public static boolean oneSidedWithheld() {
        return !onlyRdmaTransports();
    }

    /**
     * Whether a node of an endpoint withholds one-sided access: {@link #oneSidedWithheld()}, unless the endpoint
     * says {@code oneSided=trusted} ({@code trustPeers}), which gives peers one-sided access on every transport,
     * shared memory and tcp included, where nothing but the peer's good faith keeps its puts inside the registered
     * regions.
     */
    public static boolean oneSidedWithheld(boolean trustPeers) {
        return !trustPeers && oneSidedWithheld();
    }

    /**
     * The UCP configuration a node's context is created with ({@code ucp_config_modify}, per context, never the
     * process's environment): {@code NET_DEVICES} unless {@code netDevices} is null, and where one-sided access is
     * withheld {@code PUT_ENABLE=n}, tcp's put switched off: UCX 1.13's tcp transport writes an incoming put wherever
     * its header points ({@code uct_tcp_ep_handle_put_req}, no key check), and a context without RMA still has an
     * rma_bw lane over tcp. The key is the transport's own field name: {@code ucp_config_modify} hands keys it does
     * not know to every transport's configuration by that name (the environment's {@code UCX_TCP_} prefix is no part
     * of it), accepts any key, and a key no transport took is ignored with a warning when a worker is created
     * ({@code TCP_PUT_ENABLE}, used here before, was ignored so).
     */
    public static Map<String, String> contextConfig(String netDevices) {
        return contextConfig(netDevices, oneSidedWithheld());
    }

    /**
     * {@link #contextConfig(String)} for a node that withholds one-sided access from its peers or not
     * ({@link #oneSidedWithheld(boolean)}): a node that trusts its peers keeps tcp's put.
     */
    public static Map<String, String> contextConfig(String netDevices, boolean withheld) {
        Map<String, String> config = new LinkedHashMap<>();
        if (netDevices != null) {
            config.put("NET_DEVICES", netDevices);
        }
        if (withheld) {
            config.put(TCP_PUT_OFF_KEY, "n");
        }
        return config;
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

    /** How long a {@link #netDevices} answer is reused. */
    static final long DEVICES_TTL_NANOS = TimeUnit.SECONDS.toNanos(5);
    private static final Map<InetAddress, Devices> DEVICES = new ConcurrentHashMap<>();

    private record Devices(String value, long at) {
    }

    /**
     * The UCX_NET_DEVICES value that keeps UCX's network transports on {@code local}'s interface: its name
     * ({@code lo} for loopback) and the ports of any RDMA device behind it; null (UCX's choice) if the user set
     * UCX_NET_DEVICES or the interface is unknown. Cached per address for {@link #DEVICES_TTL_NANOS}: the lookup
     * (all interfaces, then sysfs) costs 0.15..0.5 ms, and every connection of both sides asks.
     */
    public static String netDevices(InetAddress local) throws SocketException {
        long now = System.nanoTime();
        Devices cached = DEVICES.get(local);
        if (cached != null && now - cached.at() < DEVICES_TTL_NANOS) {
            return cached.value();
        }
        String value = lookUpNetDevices(local);
        DEVICES.put(local, new Devices(value, now));
        return value;
    }

    private static String lookUpNetDevices(InetAddress local) throws SocketException {
        String set = System.getenv("UCX_NET_DEVICES");
        if (set != null && !set.isBlank()) {
            return null;
        }
        NetworkInterface ni = NetworkInterface.getByInetAddress(local);
        if (ni == null) {
            return null;
        }
        StringBuilder devices = new StringBuilder(ni.getName());
        String[] rdma = new File("/sys/class/net/" + ni.getName() + "/device/infiniband").list();
        for (String dev : rdma == null ? new String[0] : rdma) {
            String[] ports = new File("/sys/class/infiniband/" + dev + "/ports").list();
            for (String port : ports == null ? new String[0] : ports) {
                devices.append(',').append(dev).append(':').append(port);
            }
        }
        return devices.toString();
    }

    /**
     * Whether UCX_TLS lets UCX use shared memory between processes (unset, {@code all}, a shared-memory transport
     * named, or an exclusion list that does not exclude them): {@code UCX_TLS=tcp} says no.
     */
    public static boolean sharedMemoryAllowed() {
        String tls = System.getenv("UCX_TLS");
        if (tls == null || tls.isBlank()) {
            return true;
        }
        String t = tls.trim().toLowerCase(Locale.ROOT);
        boolean excluding = t.startsWith("^");
        boolean named = Arrays.stream((excluding ? t.substring(1) : t).split(",")).map(String::trim)
                .anyMatch(n -> n.equals("all") || n.equals("sm") || n.equals("shm") || n.equals("mm")
                        || n.equals("posix") || n.equals("sysv") || n.equals("xpmem") || n.equals("cma")
                        || n.equals("knem"));
        return excluding != named;
    }

    /**
     * Whether UCX_TLS leaves UCX only transports on an RDMA device (rc, dc, ud), whose NIC checks remote keys
     * against registered bounds; shared memory (cma) and tcp do not.
     */
    public static boolean onlyRdmaTransports() {
        String tls = System.getenv("UCX_TLS");
        if (tls == null || tls.isBlank() || tls.trim().startsWith("^") || !rdmaDevicePresent()) {
            return false;
        }
        return Arrays.stream(tls.toLowerCase(Locale.ROOT).split(",")).map(String::trim)
                .allMatch(n -> n.startsWith("rc") || n.startsWith("ud") || n.startsWith("dc"));
    }
}
