package io.rdmacomm.api;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Collections;
import java.util.EnumMap;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * Where a communicator listens or connects, and how: {@code scheme://host:port?option=value&...}.
 *
 * <pre>{@code
 * tcp://127.0.0.1:9999
 * rdma://10.0.0.2:9999?provider=ucx&connectTimeout=5s
 * tcp://[::1]:0?readTimeout=30s
 * local://test-server
 * }</pre>
 *
 * <p>Hosts and ports are {@code host:port}, with IPv6 literals in brackets ({@code [::1]:9999}); {@code local://}
 * takes a name and no port. Options are listed in {@link EndpointOption}. Immutable; {@link #toString()} gives
 * back a URI that parses to an equal endpoint.
 */
public final class Endpoint {
    private static final Pattern URI = Pattern.compile("([A-Za-z][A-Za-z0-9+.-]*)://([^?#]*)(?:\\?([^#]*))?");
    private static final Pattern LOCAL_NAME = Pattern.compile("[A-Za-z0-9._-]+");

    /** Endpoints parsed lately, by URI: a client that connects again and again parses its endpoint once. */
    private static final Map<String, Endpoint> PARSED = new ConcurrentHashMap<>();
    private static final int PARSED_MAX = 256;

    private final String scheme;
    private final String host;
    private final int port;
    private final Map<EndpointOption, Object> options;

    private Endpoint(String scheme, String host, int port, Map<EndpointOption, Object> options) {
        this.scheme = scheme;
        this.host = host;
        this.port = port;
        this.options = Collections.unmodifiableMap(options);
    }

    /**
     * Parses an endpoint URI.
     *
     * @throws IllegalArgumentException naming the bad part: the URI's form, the host, the port, an option's
     *     name (unknown, or not for this scheme), or an option's value
     */
    public static Endpoint parse(String uri) {
        Objects.requireNonNull(uri, "uri");
        Endpoint known = PARSED.get(uri);
        if (known != null) {
            return known; // immutable: the same URI parses to an equal endpoint
        }
        Endpoint e = parseUncached(uri);
        if (PARSED.size() >= PARSED_MAX) {
            PARSED.clear();
        }
        PARSED.put(uri, e);
        return e;
    }

    private static Endpoint parseUncached(String uri) {
        Matcher m = URI.matcher(uri.trim());
        if (!m.matches()) {
            throw new IllegalArgumentException("bad endpoint '" + uri + "': expected scheme://host:port[?options],"
                    + " e.g. tcp://127.0.0.1:9999");
        }
        String scheme = m.group(1).toLowerCase(Locale.ROOT);
        String authority = m.group(2);
        String host;
        int port;
        if (scheme.equals("local")) {
            if (!LOCAL_NAME.matcher(authority).matches()) {
                throw new IllegalArgumentException("bad endpoint '" + uri + "': local:// takes a name of letters,"
                        + " digits, '.', '_' or '-', e.g. local://test");
            }
            host = authority;
            port = -1;
        } else {
            HostPort hp;
            try {
                hp = HostPort.parse(authority);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("bad endpoint '" + uri + "': bad host or port '" + authority
                        + "' (" + e.getMessage() + ")");
            }
            if (hp.host().isEmpty()) {
                throw new IllegalArgumentException("bad endpoint '" + uri + "': missing host");
            }
            if (!hp.hasPort()) {
                throw new IllegalArgumentException("bad endpoint '" + uri + "': missing port (use :0 to let the"
                        + " server pick one)");
            }
            host = hp.host();
            port = hp.port();
        }
        Map<EndpointOption, Object> options = new EnumMap<>(EndpointOption.class);
        String query = m.group(3);
        if (query != null && !query.isEmpty()) {
            for (String pair : query.split("&")) {
                if (pair.isEmpty()) {
                    continue;
                }
                int eq = pair.indexOf('=');
                if (eq <= 0) {
                    throw new IllegalArgumentException("bad endpoint '" + uri + "': option '" + pair
                            + "' is not name=value");
                }
                String key = pair.substring(0, eq);
                String value = pair.substring(eq + 1);
                EndpointOption option = EndpointOption.byKey(key).orElseThrow(() -> new IllegalArgumentException(
                        "bad endpoint '" + uri + "': unknown option '" + key + "'; known options for " + scheme
                                + ": " + knownKeys(scheme)));
                if (!option.appliesTo(scheme)) {
                    throw new IllegalArgumentException("bad endpoint '" + uri + "': option '" + option.key()
                            + "' does not apply to " + scheme + "://; known options for " + scheme + ": "
                            + knownKeys(scheme));
                }
                if (options.containsKey(option)) {
                    throw new IllegalArgumentException("bad endpoint '" + uri + "': option '" + option.key()
                            + "' given twice");
                }
                try {
                    options.put(option, option.parse(value));
                } catch (IllegalArgumentException e) {
                    throw new IllegalArgumentException("bad endpoint '" + uri + "': option '" + option.key()
                            + "': " + e.getMessage(), e);
                }
            }
        }
        return new Endpoint(scheme, host, port, options);
    }

    /** An endpoint for {@code scheme://host:port} with default options. */
    public static Endpoint of(String scheme, String host, int port) {
        return parse(scheme + "://" + HostPort.format(host, port));
    }

    private static String knownKeys(String scheme) {
        return java.util.Arrays.stream(EndpointOption.values()).filter(o -> o.appliesTo(scheme))
                .map(EndpointOption::key).collect(Collectors.joining(", "));
    }

    public String scheme() {
        return scheme;
    }

    /** The host (without brackets for IPv6), or the name of a {@code local://} endpoint. */
    public String host() {
        return host;
    }

    /** The port; 0 asks the server to pick one; -1 for {@code local://}. */
    public int port() {
        return port;
    }

    /** A socket address for host and port (resolved now). */
    public InetSocketAddress socketAddress() {
        return new InetSocketAddress(host, port);
    }

    /** The same endpoint with another port (a server reports its bound port this way). */
    public Endpoint withPort(int newPort) {
        if (newPort < 0 || newPort > 65535) {
            throw new IllegalArgumentException("bad port " + newPort);
        }
        Map<EndpointOption, Object> copy = new EnumMap<>(EndpointOption.class);
        copy.putAll(options);
        return new Endpoint(scheme, host, newPort, copy);
    }

    /** The same endpoint with an option set to a value given as in a URI. */
    public Endpoint with(EndpointOption option, String value) {
        if (!option.appliesTo(scheme)) {
            throw new IllegalArgumentException("option '" + option.key() + "' does not apply to " + scheme + "://");
        }
        Map<EndpointOption, Object> copy = new EnumMap<>(EndpointOption.class);
        copy.putAll(options);
        copy.put(option, option.parse(value));
        return new Endpoint(scheme, host, port, copy);
    }

    /** Whether the URI set this option explicitly. */
    public boolean isSet(EndpointOption option) {
        return options.containsKey(option);
    }

    private Object value(EndpointOption option, EndpointOption.Type type) {
        if (option.type() != type) {
            throw new IllegalArgumentException("option '" + option.key() + "' is a " + option.type() + ", not a "
                    + type);
        }
        Object v = options.get(option);
        return v != null ? v : option.defaultValue(scheme);
    }

    /** A duration option's value, or its default. */
    public Duration duration(EndpointOption option) {
        return (Duration) value(option, EndpointOption.Type.DURATION);
    }

    /** A size option's value in bytes, or its default. */
    public long size(EndpointOption option) {
        return (Long) value(option, EndpointOption.Type.SIZE);
    }

    /** A size option's value as an {@code int}, for buffer sizes. */
    public int intSize(EndpointOption option) {
        long v = size(option);
        if (v > Integer.MAX_VALUE - 8) {
            throw new IllegalArgumentException("option '" + option.key() + "' = " + Units.formatSize(v)
                    + " is too large here (at most 2g)");
        }
        return (int) v;
    }

    /** A string option's value, or its default. */
    public String string(EndpointOption option) {
        return (String) value(option, EndpointOption.Type.STRING);
    }

    /** {@code host:port} (brackets around IPv6), or the name for {@code local://}. */
    public String authority() {
        return port < 0 ? host : HostPort.format(host, port);
    }

    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder(scheme).append("://").append(authority());
        char sep = '?';
        for (Map.Entry<EndpointOption, Object> e : options.entrySet()) {
            sb.append(sep).append(e.getKey().key()).append('=').append(e.getKey().format(e.getValue()));
            sep = '&';
        }
        return sb.toString();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Endpoint e && e.scheme.equals(scheme) && e.host.equals(host) && e.port == port
                && e.options.equals(options);
    }

    @Override
    public int hashCode() {
        return Objects.hash(scheme, host, port, options);
    }
}
