package io.rdmacomm.api;

import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The options an endpoint URI may carry ({@code ?name=value&...}), with their types, defaults, units and the
 * schemes they apply to. Parsed and validated once, in {@link Endpoint#parse(String)}.
 */
public enum EndpointOption {
    CONNECT_TIMEOUT("connectTimeout", Type.DURATION, "10s", Set.of(),
            "how long connect() waits for the peer, including the handshake"),
    ACCEPT_TIMEOUT("acceptTimeout", Type.DURATION, "0", Set.of(),
            "how long accept() waits for a peer; 0 waits until close()"),
    READ_TIMEOUT("readTimeout", Type.DURATION, "0", Set.of(),
            "how long read(), a blocked write() or sync(), and put()/get() wait for the peer (a put or get past it"
                    + " fails the connection on rdma://); 0 waits until the peer acts or close()"),
    HANDSHAKE_TIMEOUT("handshakeTimeout", Type.DURATION, "10s", Set.of(),
            "how long the server waits for a new peer's handshake before dropping it"),
    LIVENESS("liveness", Type.DURATION, "30s", Set.of("tcp", "rdma"),
            "how long a connection waits without a sign of life from its peer (data or a heartbeat, which each side"
                    + " sends when idle) before it fails every call with a SocketTimeoutException: a hung peer or a"
                    + " vanished host, without a readTimeout; on when both sides set it (tcp: wire=framed); 0 disables"),
    SEND_BUFFER("sendBuffer", Type.SIZE, "64k", Set.of("tcp", "local"),
            "bytes coalesced by write() before they are sent; sync() sends them at once"),
    BUSY_POLL("busyPoll", Type.DURATION, "0", Map.of("rdma", "50us"), Set.of("tcp", "rdma"),
            "how long a blocked read spins on the transport before it parks (lower latency, burns a core while it"
                    + " spins); rdma:// spins briefly by default, since a park costs more than a round trip there;"
                    + " a virtual thread spins at most 10us, yielding its carrier between polls"),
    BACKLOG("backlog", Type.SIZE, "4096", Set.of("tcp", "rdma"),
            "on a server: the listen queue for peers not yet taken by the accept thread, so a burst of connects"
                    + " waits rather than fails; the kernel caps it at net.core.somaxconn"),
    MAX_HANDSHAKES("maxHandshakes", Type.SIZE, "1024", Set.of("tcp", "rdma"),
            "on a server: peers in handshake at once; past it a newcomer takes the place of the one silent longest,"
                    + " once that one has sent nothing for a second, and while none has been silent that long the"
                    + " server leaves newcomers in the listen queue"),
    MAX_PEERS("maxPeers", Type.SIZE, "1m", Set.of("rdma"),
            "on a server: the most peer processes it holds connections from at once (a process's connections share"
                    + " its transport's sockets to that process); a connection from one more is refused; servercomm"
                    + " and kv-server lower it to what their descriptor limit holds"),
    MAX_REGISTERED("maxRegistered", Type.SIZE, "1g", Set.of(),
            "the most memory one connection may register: its regions, and on rdma:// also its ring,"
                    + " staging and zero-copy cache"),
    SECRET_FILE("secretFile", Type.STRING, "", Set.of("tcp", "rdma"),
            "a file holding the shared secret peers authenticate each other with (HMAC-SHA-256 challenge-response);"
                    + " a server with a secret refuses peers without it"),
    SECRET_ENV("secretEnv", Type.STRING, "", Set.of("tcp", "rdma"),
            "the name of an environment variable holding the shared secret, instead of secretFile"),
    TLS("tls", Type.STRING, "false", Set.of("tcp"),
            "true: the connection runs TLS (on the engine tlsEngine picks) before the handshake, so stream and remote-memory"
                    + " traffic are encrypted; both ends must say so"),
    TLS_CERT("tlsCert", Type.STRING, "", Set.of("tcp"),
            "a PEM file with this side's certificate chain (its own first), used with tlsKey"),
    TLS_KEY("tlsKey", Type.STRING, "", Set.of("tcp"),
            "a PEM file with this side's unencrypted PKCS#8 private key (BEGIN PRIVATE KEY), used with tlsCert"),
    TLS_KEY_STORE("tlsKeyStore", Type.STRING, "", Set.of("tcp"),
            "a PKCS#12 file with this side's key and certificate chain, instead of tlsCert and tlsKey"),
    TLS_KEY_STORE_PASSWORD_FILE("tlsKeyStorePasswordFile", Type.STRING, "", Set.of("tcp"),
            "a file holding the tlsKeyStore password"),
    TLS_KEY_STORE_PASSWORD_ENV("tlsKeyStorePasswordEnv", Type.STRING, "", Set.of("tcp"),
            "the name of an environment variable holding the tlsKeyStore password, instead of"
                    + " tlsKeyStorePasswordFile"),
    TLS_TRUST("tlsTrust", Type.STRING, "", Set.of("tcp"),
            "a PEM file of the CA certificates this side trusts for the peer's certificate; unset: the JDK's"
                    + " default trust store"),
    TLS_CLIENT_AUTH("tlsClientAuth", Type.STRING, "none", Set.of("tcp"),
            "on a server: none, optional or required, whether clients must present a certificate trusted by"
                    + " tlsTrust"),
    TLS_MIN_VERSION("tlsMinVersion", Type.STRING, "1.3", Set.of("tcp"),
            "the oldest TLS version accepted: 1.3, or 1.2 to also allow TLS 1.2"),
    TLS_ENGINE("tlsEngine", Type.STRING, "auto", Set.of("tcp"),
            "the TLS implementation: jdk (the JDK's JSSE), openssl (BoringSSL through netty-tcnative, which must"
                    + " be on the class path), or auto (openssl where it is on the class path and loads, else jdk)"),
    PROVIDER("provider", Type.STRING, "ucx", Set.of("rdma"),
            "the RDMA provider: ucx (UCX: ucx-ffm where the JVM can run it, JDK 22+ with native access, else"
                    + " ucx-jucx), ucx-ffm or ucx-jucx to force one, or verbs (DiSNI over libibverbs/librdmacm)"),
    RING_SIZE("ringSize", Type.SIZE, "2m", Set.of("rdma"),
            "the registered receive ring each side of an rdma connection advertises to its peer"),
    ZERO_COPY_THRESHOLD("zeroCopyThreshold", Type.SIZE, "256k", Set.of("rdma"),
            "reads of at least this many bytes advertise the reader's buffer for a direct one-sided write; unset,"
                    + " only where the provider places such writes directly (verbs, UCX on an RDMA device)"),
    ONE_SIDED("oneSided", Type.STRING, "checked", Set.of("rdma"),
            "checked: UCX gives the peer one-sided access (put, get) only where the transport checks remote keys"
                    + " against registered bounds (rc, dc, ud on an RDMA device), elsewhere writes travel as messages"
                    + " the owner checks; trusted: one-sided access on every UCX transport, shared memory and tcp"
                    + " included, which trusts the peer with write (and read) access to this process's registered"
                    + " memory and, since those transports check no bounds, to any address in it; both ends must say"
                    + " the same (ucx-ffm, ucx-jucx; verbs always checks keys and ignores it)"),
    WIRE("wire", Type.STRING, "framed", Set.of("tcp"),
            "framed (handshake, then frames that also carry remote memory) or raw (a plain byte stream, no handshake,"
                    + " no remote memory: what a GVirtuS TcpCommunicator speaks)");

    /** The value types of options. */
    public enum Type {
        DURATION, SIZE, STRING
    }

    /** The values of keyword options. */
    private static final Map<EndpointOption, List<String>> KEYWORDS = Map.of(
            PROVIDER, List.of("ucx", "ucx-ffm", "ucx-jucx", "verbs"), WIRE, List.of("framed", "raw"),
            ONE_SIDED, List.of("checked", "trusted"),
            TLS, List.of("false", "true"),
            TLS_CLIENT_AUTH, List.of("none", "optional", "required"), TLS_MIN_VERSION, List.of("1.3", "1.2"),
            TLS_ENGINE, List.of("auto", "jdk", "openssl"));

    private final String key;
    private final Type type;
    private final String defaultText;
    private final Map<String, String> schemeDefaults;
    private final Set<String> schemes;
    private final String description;
    /** The defaults, parsed once per scheme: every endpoint that leaves this option out reads it. */
    private final Map<String, Object> parsedDefaults = new ConcurrentHashMap<>();

    EndpointOption(String key, Type type, String defaultText, Set<String> schemes, String description) {
        this(key, type, defaultText, Map.of(), schemes, description);
    }

    EndpointOption(String key, Type type, String defaultText, Map<String, String> schemeDefaults,
            Set<String> schemes, String description) {
        this.key = key;
        this.type = type;
        this.defaultText = defaultText;
        this.schemeDefaults = schemeDefaults;
        this.schemes = schemes;
        this.description = description;
    }

    /** The name used in URIs. */
    public String key() {
        return key;
    }

    public Type type() {
        return type;
    }

    /** The default as it would be written in a URI, for schemes without a default of their own. */
    public String defaultText() {
        return defaultText;
    }

    /** The default on endpoints of {@code scheme}. */
    public String defaultText(String scheme) {
        return schemeDefaults.getOrDefault(scheme, defaultText);
    }

    /** The default on endpoints of {@code scheme}, parsed (as {@link Endpoint}'s getters return it). */
    Object defaultValue(String scheme) {
        return parsedDefaults.computeIfAbsent(scheme, sc -> parse(defaultText(sc)));
    }

    /** Schemes whose default differs from {@link #defaultText()}, with theirs. */
    public Map<String, String> schemeDefaults() {
        return schemeDefaults;
    }

    /** The schemes this option applies to; empty means every scheme. */
    public Set<String> schemes() {
        return schemes;
    }

    public String description() {
        return description;
    }

    /** Whether this option may be given on an endpoint of {@code scheme}. */
    public boolean appliesTo(String scheme) {
        return schemes.isEmpty() || schemes.contains(scheme);
    }

    /** The option called {@code key} (case-insensitive). */
    public static Optional<EndpointOption> byKey(String key) {
        return Arrays.stream(values()).filter(o -> o.key.equalsIgnoreCase(key)).findFirst();
    }

    Object parse(String text) {
        return switch (type) {
            case DURATION -> {
                Duration d = Units.parseDuration(text);
                yield d;
            }
            case SIZE -> {
                long size = Units.parseSize(text);
                if (size <= 0) {
                    throw new IllegalArgumentException("bad size '" + text + "': must be positive");
                }
                yield size;
            }
            case STRING -> {
                if (keepsCase()) {
                    yield text;
                }
                String v = text.trim().toLowerCase(Locale.ROOT);
                List<String> keywords = KEYWORDS.get(this);
                if (keywords != null && !keywords.contains(v)) {
                    throw new IllegalArgumentException("unknown " + key + " '" + text + "': expected one of "
                            + keywords);
                }
                yield v;
            }
        };
    }

    /** File and variable names are taken as written; the other strings are keywords, matched in any case. */
    private boolean keepsCase() {
        return this == SECRET_FILE || this == SECRET_ENV || this == TLS_CERT || this == TLS_KEY
                || this == TLS_KEY_STORE || this == TLS_KEY_STORE_PASSWORD_FILE || this == TLS_KEY_STORE_PASSWORD_ENV
                || this == TLS_TRUST;
    }

    String format(Object value) {
        return switch (type) {
            case DURATION -> Units.formatDuration((Duration) value);
            case SIZE -> Units.formatSize((Long) value);
            case STRING -> (String) value;
        };
    }
}
