package io.rdmacomm.tcp;

import io.netty.buffer.ByteBufAllocator;
import io.netty.handler.ssl.OpenSsl;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslProvider;
import javax.net.ssl.KeyManager;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLException;
import javax.net.ssl.TrustManager;

/**
 * {@code tlsEngine=openssl}: engines from BoringSSL through netty-tcnative, with the same key and trust managers as
 * the JDK's engines get ({@link TlsKeys}). Only this class names Netty; it is loaded only once
 * {@link TlsConfig} found Netty's OpenSSL support on the class path, so transport-tcp runs without Netty.
 * Protocols, client certificates and host name checks are set on each engine by {@link TlsConfig}, as for the JDK's.
 */
final class OpenSslEngines implements TlsConfig.Engines {
    private final SslContext server;
    private final SslContext client;

    private OpenSslEngines(SslContext server, SslContext client) {
        this.server = server;
        this.client = client;
    }

    /** Null when BoringSSL does not load here; else why not, for a message. */
    static Throwable unavailability() {
        return OpenSsl.isAvailable() ? null : OpenSsl.unavailabilityCause();
    }

    /** The contexts for {@code keys} (null: this side has no key material, so it cannot serve) and {@code trust}. */
    static OpenSslEngines of(KeyManager[] keys, TrustManager[] trust) {
        try {
            return build(keys, trust);
        } catch (SSLException e) {
            throw new IllegalArgumentException("cannot set up BoringSSL (tlsEngine=openssl): " + e.getMessage(), e);
        }
    }

    private static OpenSslEngines build(KeyManager[] keys, TrustManager[] trust) throws SSLException {
        SslContext server = null;
        if (keys != null) {
            server = SslContextBuilder.forServer(keys[0]).trustManager(trust[0]).sslProvider(SslProvider.OPENSSL)
                    .build();
        }
        SslContextBuilder client = SslContextBuilder.forClient().trustManager(trust[0])
                .sslProvider(SslProvider.OPENSSL);
        if (keys != null) {
            client.keyManager(keys[0]);
        }
        return new OpenSslEngines(server, client.build());
    }

    @Override
    public SSLEngine server() {
        return server.newEngine(ByteBufAllocator.DEFAULT);
    }

    @Override
    public SSLEngine client(String host, int port) {
        return client.newEngine(ByteBufAllocator.DEFAULT, host, port);
    }

    @Override
    public boolean directBuffers() {
        return true;
    }

    @Override
    public String toString() {
        return "openssl (" + OpenSsl.versionString() + " through netty-tcnative)";
    }
}
