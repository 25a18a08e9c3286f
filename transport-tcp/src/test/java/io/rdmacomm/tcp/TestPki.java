package io.rdmacomm.tcp;

import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Throw-away TLS key material, made at run time with the JDK's keytool (nothing private is committed): a test CA,
 * leaf certificates it signs (EC P-256, with the IP address 127.0.0.1 as subject alternative name), one that
 * expired, and a self-signed "rogue" certificate no test trusts. Made once per JVM into a temporary directory.
 */
final class TestPki {
    static final String STORE_PASSWORD = "test-only-password";
    /**
     * For the contract kits over TLS: a TLS handshake costs both sides CPU, and the kit's sixty-four simultaneous
     * peers on a loaded 2-core machine took longer than the default 10 s connect and handshake timeouts.
     */
    static final String CONTRACT_OPTIONS = "connectTimeout=60s&handshakeTimeout=60s";
    /** keytool starts a JVM per call; four of them at once took over 2 minutes at load average 40 on 2 cores. */
    private static final long LIMIT_MINUTES = 10;
    private static TestPki instance;

    final Path dir;
    /** The CA certificate (PEM), what {@code tlsTrust} names. */
    final Path ca;
    final Leaf server;
    final Leaf client;
    final Leaf expired;
    final Leaf rogue;

    /** A certificate chain and key in PEM, and the same in a PKCS#12 store (password {@link #STORE_PASSWORD}). */
    record Leaf(Path chain, Path key, Path store) {
        /** Endpoint options that present this leaf. */
        String pem() {
            return "tlsCert=" + chain + "&tlsKey=" + key;
        }
    }

    private TestPki(Path dir) throws Exception {
        this.dir = dir;
        keytool("-genkeypair", "-alias", "ca", "-keystore", "ca.p12", "-dname", "CN=rdmacomm test CA",
                "-ext", "bc:c", "-validity", "2");
        this.ca = dir.resolve("ca.pem");
        Files.writeString(ca, pem("CERTIFICATE", load("ca.p12").getCertificate("ca").getEncoded()));
        CompletableFuture<Leaf> s = CompletableFuture.supplyAsync(() -> signed("server", "2"));
        CompletableFuture<Leaf> c = CompletableFuture.supplyAsync(() -> signed("client", "2"));
        CompletableFuture<Leaf> x = CompletableFuture.supplyAsync(() -> signed("expired", "1", "-startdate", "-10d"));
        CompletableFuture<Leaf> r = CompletableFuture.supplyAsync(() -> {
            try {
                keytool("-genkeypair", "-alias", "rogue", "-keystore", "rogue.p12", "-dname", "CN=rogue",
                        "-ext", "san=ip:127.0.0.1", "-validity", "2");
                return export("rogue", List.of());
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        this.server = s.get(LIMIT_MINUTES, TimeUnit.MINUTES);
        this.client = c.get(LIMIT_MINUTES, TimeUnit.MINUTES);
        this.expired = x.get(LIMIT_MINUTES, TimeUnit.MINUTES);
        this.rogue = r.get(LIMIT_MINUTES, TimeUnit.MINUTES);
    }

    static synchronized TestPki get() {
        if (instance == null) {
            try {
                Path dir = Files.createTempDirectory("rdmacomm-test-pki");
                Runtime.getRuntime().addShutdownHook(new Thread(() -> delete(dir)));
                instance = new TestPki(dir);
            } catch (Exception e) {
                throw new IllegalStateException("cannot make the test key material with keytool: " + e, e);
            }
        }
        return instance;
    }

    private static void delete(Path dir) {
        try (var files = Files.list(dir)) {
            for (Path f : (Iterable<Path>) files::iterator) {
                Files.deleteIfExists(f);
            }
            Files.deleteIfExists(dir);
        } catch (IOException e) {
            // a temporary directory; the OS cleans up what is left
        }
    }

    /** A server URI on 127.0.0.1 presenting {@link #server}, trusting the CA, with {@code more} options. */
    String serverUri(String more) {
        return "tcp://127.0.0.1:0?tls=true&" + server.pem() + "&tlsTrust=" + ca + (more.isEmpty() ? "" : "&" + more);
    }

    /** A client URI for {@code port} trusting the CA, with {@code more} options. */
    String clientUri(int port, String more) {
        return "tcp://127.0.0.1:" + port + "?tls=true&tlsTrust=" + ca + (more.isEmpty() ? "" : "&" + more);
    }

    /** A leaf signed by the CA: key pair, request, signature ({@code extra}: more gencert options). */
    private Leaf signed(String name, String validity, String... extra) {
        try {
            String store = name + ".p12";
            keytool("-genkeypair", "-alias", name, "-keystore", store, "-dname", "CN=" + name);
            keytool("-certreq", "-alias", name, "-keystore", store, "-file", name + ".csr");
            List<String> gencert = new ArrayList<>(List.of("-gencert", "-alias", "ca", "-keystore", "ca.p12",
                    "-infile", name + ".csr", "-outfile", name + ".crt", "-rfc", "-ext", "san=ip:127.0.0.1",
                    "-validity", validity));
            gencert.addAll(List.of(extra));
            keytool(gencert.toArray(new String[0]));
            Certificate leaf;
            try (var in = Files.newInputStream(dir.resolve(name + ".crt"))) {
                leaf = CertificateFactory.getInstance("X.509").generateCertificate(in);
            }
            Certificate caCert = load("ca.p12").getCertificate("ca");
            return export(name, List.of(leaf, caCert));
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /** Writes {@code name}'s key and chain (or its self-signed certificate) as PEM and PKCS#12. */
    private Leaf export(String name, List<Certificate> chain) throws Exception {
        KeyStore ks = load(name + ".p12");
        PrivateKey key = (PrivateKey) ks.getKey(name, STORE_PASSWORD.toCharArray());
        Certificate[] certs = chain.isEmpty() ? new Certificate[] {ks.getCertificate(name)}
                : chain.toArray(new Certificate[0]);
        StringBuilder text = new StringBuilder();
        for (Certificate c : certs) {
            text.append(pem("CERTIFICATE", c.getEncoded()));
        }
        Path chainFile = Files.writeString(dir.resolve(name + "-chain.pem"), text);
        Path keyFile = Files.writeString(dir.resolve(name + "-key.pem"), pem("PRIVATE KEY", key.getEncoded()));
        KeyStore out = KeyStore.getInstance("PKCS12");
        out.load(null, null);
        out.setKeyEntry(name, key, STORE_PASSWORD.toCharArray(), certs);
        Path storeFile = dir.resolve(name + "-full.p12");
        try (OutputStream o = Files.newOutputStream(storeFile)) {
            out.store(o, STORE_PASSWORD.toCharArray());
        }
        return new Leaf(chainFile, keyFile, storeFile);
    }

    private KeyStore load(String store) throws IOException, GeneralSecurityException {
        KeyStore ks = KeyStore.getInstance("PKCS12");
        try (var in = Files.newInputStream(dir.resolve(store))) {
            ks.load(in, STORE_PASSWORD.toCharArray());
        }
        return ks;
    }

    static String pem(String type, byte[] der) {
        return "-----BEGIN " + type + "-----\n" + Base64.getMimeEncoder(64, new byte[] {'\n'}).encodeToString(der)
                + "\n-----END " + type + "-----\n";
    }

    /** A file holding the store password, for {@code tlsKeyStorePasswordFile}. */
    Path passwordFile() {
        Path p = dir.resolve("store-password");
        try {
            if (!Files.exists(p)) {
                Files.writeString(p, STORE_PASSWORD + "\n", StandardCharsets.UTF_8);
            }
            return p;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private void keytool(String... args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "keytool").toString());
        command.addAll(List.of(args));
        command.addAll(List.of("-storepass", STORE_PASSWORD, "-keypass", STORE_PASSWORD, "-storetype", "PKCS12"));
        // a short-lived JVM: C1 only, one compiler thread, the serial collector (0.65 -> 0.40 s a call here)
        command.addAll(List.of("-J-XX:TieredStopAtLevel=1", "-J-XX:CICompilerCount=1", "-J-XX:+UseSerialGC"));
        if (args[0].equals("-genkeypair")) {
            command.addAll(List.of("-keyalg", "EC", "-groupname", "secp256r1"));
        }
        Process p = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true).start();
        byte[] output = p.getInputStream().readAllBytes();
        if (!p.waitFor(LIMIT_MINUTES, TimeUnit.MINUTES) || p.exitValue() != 0) {
            p.destroyForcibly();
            throw new IOException("keytool " + String.join(" ", args) + " failed: "
                    + new String(output, StandardCharsets.UTF_8));
        }
    }
}
