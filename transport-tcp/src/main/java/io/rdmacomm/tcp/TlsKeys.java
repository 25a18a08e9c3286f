package io.rdmacomm.tcp;

import io.rdmacomm.api.Endpoint;
import io.rdmacomm.api.EndpointOption;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.Signature;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import javax.net.ssl.KeyManager;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;

/**
 * Key material for TLS from the endpoint's options, with the JDK only: a certificate chain and a PKCS#8 private
 * key in PEM files, or a PKCS#12 key store whose password comes from a file or an environment variable (never the
 * URI); trusted CA certificates in a PEM file. Every failure is an {@link IllegalArgumentException} naming the
 * option and the file.
 */
final class TlsKeys {
    private static final String BEGIN_KEY = "-----BEGIN PRIVATE KEY-----";
    private static final String END_KEY = "-----END PRIVATE KEY-----";
    /** Key algorithms a PKCS#8 key may use, with a signature to check that it matches its certificate. */
    private static final Map<String, String> ALGORITHMS = Map.of("RSA", "SHA256withRSA", "EC", "SHA256withECDSA",
            "EdDSA", "EdDSA");

    private TlsKeys() {
    }

    /** This side's key managers, or null when the endpoint names no key material. */
    static KeyManager[] keyManagers(Endpoint e, Map<String, String> environment) {
        String cert = e.string(EndpointOption.TLS_CERT);
        String key = e.string(EndpointOption.TLS_KEY);
        String store = e.string(EndpointOption.TLS_KEY_STORE);
        if (!store.isEmpty() && (!cert.isEmpty() || !key.isEmpty())) {
            throw new IllegalArgumentException("give tlsKeyStore or tlsCert with tlsKey, not both");
        }
        if (cert.isEmpty() != key.isEmpty()) {
            throw new IllegalArgumentException("tlsCert and tlsKey go together: " + (cert.isEmpty() ? "tlsKey"
                    : "tlsCert") + " is set, the other is not");
        }
        char[] password = new char[0];
        KeyStore ks;
        try {
            if (!store.isEmpty()) {
                password = storePassword(e, environment);
                ks = loadPkcs12(Path.of(store), password);
            } else if (!cert.isEmpty()) {
                ks = KeyStore.getInstance("PKCS12");
                ks.load(null, null);
                X509Certificate[] chain = certificates(Path.of(cert), "tlsCert").toArray(new X509Certificate[0]);
                PrivateKey privateKey = privateKey(Path.of(key));
                checkPair(privateKey, chain[0], cert, key);
                ks.setKeyEntry("key", privateKey, password, chain);
            } else {
                if (!e.string(EndpointOption.TLS_KEY_STORE_PASSWORD_FILE).isEmpty()
                        || !e.string(EndpointOption.TLS_KEY_STORE_PASSWORD_ENV).isEmpty()) {
                    throw new IllegalArgumentException("a tlsKeyStore password is given but no tlsKeyStore");
                }
                return null;
            }
            KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
            kmf.init(ks, password);
            return kmf.getKeyManagers();
        } catch (GeneralSecurityException | IOException ex) {
            throw new IllegalArgumentException("cannot use the TLS key material (" + (store.isEmpty() ? "tlsCert "
                    + cert + ", tlsKey " + key : "tlsKeyStore " + store) + "): " + ex.getMessage(), ex);
        }
    }

    /** Trust managers for the peer's certificate: the CAs in {@code tlsTrust}, else the JDK's defaults. */
    static TrustManager[] trustManagers(Endpoint e) {
        String trust = e.string(EndpointOption.TLS_TRUST);
        try {
            KeyStore ks = null;
            if (!trust.isEmpty()) {
                ks = KeyStore.getInstance("PKCS12");
                ks.load(null, null);
                int i = 0;
                for (X509Certificate c : certificates(Path.of(trust), "tlsTrust")) {
                    ks.setCertificateEntry("ca-" + i++, c);
                }
            }
            TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            tmf.init(ks);
            return tmf.getTrustManagers();
        } catch (GeneralSecurityException | IOException ex) {
            throw new IllegalArgumentException("cannot use the CA certificates of tlsTrust " + trust + ": "
                    + ex.getMessage(), ex);
        }
    }

    private static char[] storePassword(Endpoint e, Map<String, String> environment) throws IOException {
        String file = e.string(EndpointOption.TLS_KEY_STORE_PASSWORD_FILE);
        String env = e.string(EndpointOption.TLS_KEY_STORE_PASSWORD_ENV);
        if (file.isEmpty() == env.isEmpty()) {
            throw new IllegalArgumentException("tlsKeyStore needs its password from exactly one of"
                    + " tlsKeyStorePasswordFile and tlsKeyStorePasswordEnv");
        }
        String text;
        if (!file.isEmpty()) {
            try {
                text = Files.readString(Path.of(file), StandardCharsets.UTF_8);
            } catch (IOException ex) {
                throw new IllegalArgumentException("cannot read tlsKeyStorePasswordFile " + file + ": " + ex, ex);
            }
        } else {
            text = environment.get(env);
            if (text == null) {
                throw new IllegalArgumentException("environment variable " + env
                        + " (tlsKeyStorePasswordEnv) is not set");
            }
        }
        return text.replaceAll("[\r\n]+$", "").toCharArray();
    }

    private static KeyStore loadPkcs12(Path file, char[] password) throws GeneralSecurityException, IOException {
        KeyStore ks = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(file)) {
            ks.load(in, password);
        } catch (IOException ex) {
            // the JDK reports a wrong password as an IOException whose cause is an UnrecoverableKeyException
            throw new IOException("not a readable PKCS#12 file, or the wrong password: " + ex.getMessage(), ex);
        }
        return ks;
    }

    /** The certificates in a PEM file, in order; at least one. */
    private static List<X509Certificate> certificates(Path file, String option)
            throws GeneralSecurityException, IOException {
        Collection<? extends Certificate> certs;
        try (InputStream in = new ByteArrayInputStream(Files.readAllBytes(file))) {
            certs = CertificateFactory.getInstance("X.509").generateCertificates(in);
        }
        if (certs.isEmpty()) {
            throw new IllegalArgumentException(option + " " + file + " holds no PEM certificate");
        }
        List<X509Certificate> list = new ArrayList<>();
        for (Certificate c : certs) {
            list.add((X509Certificate) c);
        }
        return list;
    }

    /** The one unencrypted PKCS#8 key in a PEM file. */
    private static PrivateKey privateKey(Path file) throws IOException {
        String text = Files.readString(file, StandardCharsets.US_ASCII);
        int begin = text.indexOf(BEGIN_KEY);
        int end = text.indexOf(END_KEY);
        if (begin < 0 || end < begin) {
            throw new IllegalArgumentException("tlsKey " + file + " holds no '" + BEGIN_KEY + "' block (an"
                    + " unencrypted PKCS#8 key; convert others with: openssl pkcs8 -topk8 -nocrypt)");
        }
        byte[] der;
        try {
            der = Base64.getMimeDecoder().decode(text.substring(begin + BEGIN_KEY.length(), end));
        } catch (IllegalArgumentException ex) {
            throw new IllegalArgumentException("tlsKey " + file + ": the key is not valid base64", ex);
        }
        for (String algorithm : ALGORITHMS.keySet()) {
            try {
                return KeyFactory.getInstance(algorithm).generatePrivate(new PKCS8EncodedKeySpec(der));
            } catch (GeneralSecurityException notThisOne) {
                // try the next algorithm: a PKCS#8 blob names its algorithm only as an OID
            }
        }
        throw new IllegalArgumentException("tlsKey " + file + " is not a PKCS#8 key of a supported algorithm "
                + ALGORITHMS.keySet());
    }

    /** Fails unless the key signs what the certificate's public key verifies. */
    private static void checkPair(PrivateKey key, X509Certificate cert, String certFile, String keyFile)
            throws GeneralSecurityException {
        String algorithm = ALGORITHMS.get(key.getAlgorithm());
        PublicKey pub = cert.getPublicKey();
        if (algorithm == null || !pub.getAlgorithm().equals(key.getAlgorithm())) {
            throw new IllegalArgumentException("tlsKey " + keyFile + " (" + key.getAlgorithm() + ") does not"
                    + " belong to the first certificate of tlsCert " + certFile + " (" + pub.getAlgorithm() + ")");
        }
        byte[] probe = "rdmacomm key check".getBytes(StandardCharsets.US_ASCII);
        Signature s = Signature.getInstance(algorithm);
        s.initSign(key);
        s.update(probe);
        byte[] signature = s.sign();
        s.initVerify(pub);
        s.update(probe);
        if (!s.verify(signature)) {
            throw new IllegalArgumentException("tlsKey " + keyFile + " does not belong to the first certificate"
                    + " of tlsCert " + certFile + " (" + cert.getSubjectX500Principal().getName() + ")");
        }
    }
}
