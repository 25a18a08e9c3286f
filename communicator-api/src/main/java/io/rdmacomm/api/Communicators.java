package io.rdmacomm.api;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Collections;
import java.util.Map;
import java.util.ServiceLoader;
import java.util.TreeMap;

/**
 * Opens communicators by endpoint, choosing the transport by the URI's scheme among the
 * {@link CommunicatorProvider}s on the class path.
 *
 * <pre>{@code
 * try (Communicator server = Communicators.serve("tcp://127.0.0.1:0")) {
 *     try (Communicator peer = server.accept()) { ... }
 * }
 * try (Communicator client = Communicators.connect("tcp://127.0.0.1:9999")) { ... }
 * }</pre>
 */
public final class Communicators {
    private Communicators() {
    }

    /**
     * The providers found once, on first use: a {@link ServiceLoader} lookup reads every jar's service file, which
     * cost a connection as much as its handshake when it ran on every connect.
     */
    private static volatile Map<String, CommunicatorProvider> found;

    /** The providers on the class path (or module path), by scheme. */
    public static Map<String, CommunicatorProvider> providers() {
        Map<String, CommunicatorProvider> all = found;
        if (all == null) {
            Map<String, CommunicatorProvider> byScheme = new TreeMap<>();
            for (CommunicatorProvider p : ServiceLoader.load(CommunicatorProvider.class,
                    Communicators.class.getClassLoader())) {
                byScheme.putIfAbsent(p.scheme(), p);
            }
            all = Collections.unmodifiableMap(byScheme);
            found = all;
        }
        return all;
    }

    /** The provider for {@code scheme}, with a message naming the schemes available if there is none. */
    public static CommunicatorProvider provider(String scheme) {
        Map<String, CommunicatorProvider> all = providers();
        CommunicatorProvider p = all.get(scheme);
        if (p == null) {
            throw new IllegalArgumentException("unknown scheme '" + scheme + "://'; available schemes: "
                    + (all.isEmpty() ? "none (no transport module on the class path)"
                            : String.join(", ", all.keySet())));
        }
        return p;
    }

    /**
     * Creates an unconnected communicator for the endpoint; call {@link Communicator#serve()} or
     * {@link Communicator#connect()} next.
     *
     * @throws IllegalArgumentException if no transport serves the endpoint's scheme
     * @throws TransportUnavailableException if the transport cannot run here; the message says why and how to fix
     */
    public static Communicator open(Endpoint endpoint) throws TransportUnavailableException {
        CommunicatorProvider p = provider(endpoint.scheme());
        var cause = p.unavailabilityCause(endpoint);
        if (cause.isPresent()) {
            throw new TransportUnavailableException(endpoint + " cannot be used here: " + cause.get());
        }
        return p.open(endpoint);
    }

    /** {@link #open(Endpoint)} for a URI. */
    public static Communicator open(String uri) throws TransportUnavailableException {
        return open(Endpoint.parse(uri));
    }

    /** Opens and serves; on failure nothing stays open. */
    public static Communicator serve(String uri) throws IOException {
        Communicator c = open(uri);
        try {
            c.serve();
            return c;
        } catch (IOException | RuntimeException e) {
            closeQuietly(c, e);
            throw e;
        }
    }

    /** Opens and connects; on failure nothing stays open. */
    public static Communicator connect(String uri) throws IOException {
        return connect(uri, null);
    }

    /**
     * Opens and connects, sending {@code first} as the client's first bytes ({@link Communicator#connect(ByteBuffer)};
     * null: none); on failure nothing stays open.
     */
    public static Communicator connect(String uri, ByteBuffer first) throws IOException {
        Communicator c = open(uri);
        try {
            if (first == null) {
                c.connect();
            } else {
                c.connect(first);
            }
            return c;
        } catch (IOException | RuntimeException e) {
            closeQuietly(c, e);
            throw e;
        }
    }

    private static void closeQuietly(Communicator c, Exception primary) {
        try {
            c.close();
        } catch (IOException | RuntimeException e) {
            primary.addSuppressed(e);
        }
    }
}
