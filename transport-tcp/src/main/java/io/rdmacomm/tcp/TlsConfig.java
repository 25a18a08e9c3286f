package io.rdmacomm.tcp;

import io.rdmacomm.api.Endpoint;
import io.rdmacomm.api.EndpointOption;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import javax.net.ssl.KeyManager;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.TrustManager;

/**
 * An endpoint's TLS settings ({@code tls=true} and the {@code tls*} options), read once: a TLS context with the key
 * material of {@link TlsKeys} (the JDK's, or BoringSSL's through netty-tcnative: {@code tlsEngine}), and the
 * engines each connection runs. TLS 1.3 only unless
 * {@code tlsMinVersion=1.2}; a client checks that the server's certificate names the host it dialled (DNS name or
 * IP address, as HTTPS does).
 */
final class TlsConfig {
    /**
     * Settings already built, by their options and the files' modification times: building one reads and checks
     * the key material, and a shared context lets later connections resume TLS sessions. Bounded by clearing.
     */
    private static final Map<String, TlsConfig> CACHE = new ConcurrentHashMap<>();
    private static final int CACHE_MAX = 64;
    private static final Set<EndpointOption> FILES = EnumSet.of(EndpointOption.TLS_CERT, EndpointOption.TLS_KEY,
            EndpointOption.TLS_KEY_STORE, EndpointOption.TLS_KEY_STORE_PASSWORD_FILE, EndpointOption.TLS_TRUST);

    /** Where a configuration's engines come from. */
    interface Engines {
        /** A new engine for one accepted connection; only where this side has key material. */
        SSLEngine server();

        /** A new engine for a connection to {@code host}. */
        SSLEngine client(String host, int port);

        /**
         * Whether the engines work on native memory in place (BoringSSL's), so their sessions' buffers are direct;
         * the JDK's work on arrays and copy direct buffers.
         */
        default boolean directBuffers() {
            return false;
        }
    }

    private final Engines engines;
    private final boolean hasKeys;
    private final String[] protocols;
    private final String clientAuth;

    private TlsConfig(Engines engines, boolean hasKeys, String[] protocols, String clientAuth) {
        this.engines = engines;
        this.hasKeys = hasKeys;
        this.protocols = protocols;
        this.clientAuth = clientAuth;
    }

    /**
     * The endpoint's TLS settings, or null when {@code tls} is off.
     *
     * @throws IllegalArgumentException if a {@code tls*} option is given without {@code tls=true}, or the key
     *     material cannot be used (the message names the option and file)
     */
    static TlsConfig of(Endpoint e) {
        if (!e.string(EndpointOption.TLS).equals("true")) {
            return of(e, System.getenv());
        }
        String key = cacheKey(e);
        TlsConfig cached = CACHE.get(key);
        if (cached != null) {
            return cached;
        }
        TlsConfig made = of(e, System.getenv());
        if (CACHE.size() >= CACHE_MAX) {
            CACHE.clear();
        }
        CACHE.put(key, made);
        return made;
    }

    /** The TLS options with the modification times of the files they name, so a changed file is read again. */
    private static String cacheKey(Endpoint e) {
        StringBuilder key = new StringBuilder();
        for (EndpointOption o : EndpointOption.values()) {
            if (o.key().startsWith("tls") || o == EndpointOption.WIRE) {
                String v = e.string(o);
                key.append(o.key()).append('=').append(v);
                if (FILES.contains(o) && !v.isEmpty()) {
                    try {
                        key.append('@').append(Files.getLastModifiedTime(Path.of(v)).toMillis());
                    } catch (IOException | RuntimeException missing) {
                        key.append("@missing");
                    }
                }
                key.append('&');
            }
        }
        return key.toString();
    }

    static TlsConfig of(Endpoint e, Map<String, String> environment) {
        if (!e.string(EndpointOption.TLS).equals("true")) {
            for (EndpointOption o : EndpointOption.values()) {
                if (o != EndpointOption.TLS && o.key().startsWith("tls") && e.isSet(o)) {
                    throw new IllegalArgumentException("option " + o.key() + " is set but TLS is off; add tls=true");
                }
            }
            return null;
        }
        if (e.string(EndpointOption.WIRE).equals("raw")) {
            throw new IllegalArgumentException("tls=true needs the framed wire; wire=raw is a plain byte stream");
        }
        KeyManager[] keys = TlsKeys.keyManagers(e, environment);
        TrustManager[] trust = TlsKeys.trustManagers(e);
        try {
            String[] protocols = e.string(EndpointOption.TLS_MIN_VERSION).equals("1.2")
                    ? new String[] {"TLSv1.3", "TLSv1.2"} : new String[] {"TLSv1.3"};
            return new TlsConfig(engines(e, keys, trust), keys != null, protocols,
                    e.string(EndpointOption.TLS_CLIENT_AUTH));
        } catch (GeneralSecurityException ex) {
            throw new IllegalArgumentException("cannot set up TLS for " + e.authority() + ": " + ex.getMessage(), ex);
        }
    }

    /** The engines {@code tlsEngine} asks for: jdk, openssl (which must load), or auto (openssl where it loads). */
    private static Engines engines(Endpoint e, KeyManager[] keys, TrustManager[] trust)
            throws GeneralSecurityException {
        String wanted = e.string(EndpointOption.TLS_ENGINE);
        if (!wanted.equals("jdk")) {
            Throwable missing = openSslMissing();
            if (missing == null) {
                return OpenSslEngines.of(keys, trust);
            }
            if (wanted.equals("openssl")) {
                throw new IllegalArgumentException("tlsEngine=openssl needs BoringSSL through netty-tcnative"
                        + " (io.netty:netty-handler and io.netty:netty-tcnative-boringssl-static on the class path):"
                        + " " + missing);
            }
        }
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(keys, trust, null);
        return new Engines() {
            @Override
            public SSLEngine server() {
                return context.createSSLEngine();
            }

            @Override
            public SSLEngine client(String host, int port) {
                return context.createSSLEngine(host, port);
            }

            @Override
            public String toString() {
                return "jdk (" + context.getProvider().getName() + ")";
            }
        };
    }

    /** Null where netty-tcnative's BoringSSL is on the class path and loads; else why not. */
    private static Throwable openSslMissing() {
        try {
            Class.forName("io.netty.handler.ssl.OpenSsl", false, TlsConfig.class.getClassLoader());
        } catch (ClassNotFoundException | LinkageError ex) {
            return new ClassNotFoundException("io.netty.handler.ssl.OpenSsl is not on the class path");
        }
        try {
            return OpenSslEngines.unavailability();
        } catch (LinkageError ex) {
            return ex;
        }
    }

    /** Fails unless a server can run with these settings: it needs a certificate and key. */
    void checkServer(Endpoint e) {
        if (!hasKeys) {
            throw new IllegalArgumentException("cannot serve " + e.authority() + " with tls=true: the server needs"
                    + " its certificate and key (tlsCert and tlsKey, or tlsKeyStore)");
        }
    }

    /** The TLS session of one accepted connection, from {@code peer}. */
    TlsSession serverSession(String peer) {
        return new TlsSession(serverEngine(), peer, engines.directBuffers());
    }

    /** The TLS session of a connection to {@code e}, described as {@code where} in messages. */
    TlsSession clientSession(Endpoint e, String where) {
        return new TlsSession(clientEngine(e), where, engines.directBuffers());
    }

    /** An engine for one accepted connection. */
    private SSLEngine serverEngine() {
        SSLEngine engine = engines.server();
        engine.setUseClientMode(false);
        SSLParameters p = engine.getSSLParameters();
        p.setProtocols(protocols);
        switch (clientAuth) {
            case "required" -> p.setNeedClientAuth(true);
            case "optional" -> p.setWantClientAuth(true);
            default -> p.setNeedClientAuth(false);
        }
        engine.setSSLParameters(p);
        return engine;
    }

    /** An engine for a connection to {@code e}, verifying that the server's certificate names its host. */
    private SSLEngine clientEngine(Endpoint e) {
        SSLEngine engine = engines.client(e.host(), e.port());
        engine.setUseClientMode(true);
        SSLParameters p = engine.getSSLParameters();
        p.setProtocols(protocols);
        p.setEndpointIdentificationAlgorithm("HTTPS");
        engine.setSSLParameters(p);
        return engine;
    }

    @Override
    public String toString() {
        return "TLS " + Arrays.toString(protocols) + ", client certificates " + clientAuth + ", engine " + engines;
    }
}
