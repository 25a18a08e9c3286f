package io.rdmacomm.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.Communicators;
import io.rdmacomm.api.Endpoint;
import io.rdmacomm.api.HandshakeException;
import io.rdmacomm.api.auth.AuthenticationException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * TLS on tcp:// against real peers with wrong, expired, untrusted or missing key material, and against peers that
 * speak plain or stall: each failure names what went wrong, and the server goes on serving.
 */
@Timeout(120)
class TlsTest {
    private static final String SLOW_MACHINE = "connectTimeout=30s";
    private final TestPki pki = TestPki.get();
    private final ExecutorService helper = Executors.newCachedThreadPool();
    private final List<SocketChannel> raw = new ArrayList<>();
    @TempDir
    Path dir;

    @AfterEach
    void cleanUp() throws Exception {
        for (SocketChannel c : raw) {
            c.close();
        }
        helper.shutdownNow();
        assertTrue(helper.awaitTermination(10, TimeUnit.SECONDS));
    }

    /** The TLS engine every endpoint of these tests asks for ({@code tlsEngine}). */
    String engine() {
        return "openssl";
    }

    /** {@code uri} with this run's {@code tlsEngine} where it turns TLS on. */
    private String onEngine(String uri) {
        return uri.contains("tls=true") ? uri + "&tlsEngine=" + engine() : uri;
    }

    private Communicator serve(String uri) throws IOException {
        return Communicators.serve(onEngine(uri));
    }

    private Communicator connect(String uri) throws IOException {
        return Communicators.connect(onEngine(uri));
    }

    /** A client of {@code clientUri} gets in and bytes go both ways. */
    private void assertServes(Communicator server, String clientUri) throws Exception {
        Future<Communicator> accepted = helper.submit(server::accept);
        try (Communicator client = connect(clientUri);
                Communicator peer = accepted.get(60, TimeUnit.SECONDS)) {
            client.write(ByteBuffer.wrap(new byte[] {1, 2, 3}));
            client.sync();
            ByteBuffer got = ByteBuffer.allocate(3);
            peer.readFully(got);
            assertEquals(ByteBuffer.wrap(new byte[] {1, 2, 3}), got.flip());
            peer.write(ByteBuffer.wrap(new byte[] {4}));
            peer.sync();
            ByteBuffer back = ByteBuffer.allocate(1);
            client.readFully(back);
            assertEquals(4, back.get(0));
        }
    }

    /** The client of {@code clientUri} is refused with a message containing {@code expected}; then a good one gets in. */
    private IOException assertRefusedThenServes(Communicator server, String clientUri, String expected)
            throws Exception {
        IOException e = assertThrows(IOException.class, () -> connect(clientUri).close());
        assertTrue(e.getMessage().contains(expected), "expected '" + expected + "' in: " + e.getMessage());
        assertServes(server, pki.clientUri(server.endpoint().port(), SLOW_MACHINE));
        return e;
    }

    private String serverUriWith(TestPki.Leaf leaf, String more) {
        return "tcp://127.0.0.1:0?tls=true&" + leaf.pem() + "&tlsTrust=" + pki.ca + (more.isEmpty() ? "" : "&" + more);
    }

    @Test
    void aServerWhoseCertificateNoTrustedCaSignedIsRefused() throws Exception {
        try (Communicator server = serve(serverUriWith(pki.rogue, ""));
                Communicator good = serve(pki.serverUri(""))) {
            IOException e = assertThrows(IOException.class,
                    () -> connect(pki.clientUri(server.endpoint().port(), SLOW_MACHINE)).close());
            assertInstanceOf(HandshakeException.class, e);
            assertTrue(e.getMessage().contains("the server's certificate is not signed by a CA this side trusts"),
                    e.getMessage());
            assertServes(good, pki.clientUri(good.endpoint().port(), SLOW_MACHINE));
        }
    }

    @Test
    void anExpiredServerCertificateIsRefused() throws Exception {
        try (Communicator server = serve(serverUriWith(pki.expired, ""))) {
            IOException e = assertThrows(IOException.class,
                    () -> connect(pki.clientUri(server.endpoint().port(), SLOW_MACHINE)).close());
            assertTrue(e.getMessage().contains("the server's certificate has expired"), e.getMessage());
        }
    }

    @Test
    void aCertificateThatDoesNotNameTheDialledHostIsRefused() throws Exception {
        try (Communicator server = serve(pki.serverUri(""))) {
            String byName = "tcp://localhost:" + server.endpoint().port() + "?tls=true&tlsTrust=" + pki.ca + "&"
                    + SLOW_MACHINE;
            assertRefusedThenServes(server, byName, "does not name the host");
        }
    }

    @Test
    void aPlainClientIsToldTheServerRequiresTls() throws Exception {
        try (Communicator server = serve(pki.serverUri(""))) {
            IOException e = assertRefusedThenServes(server, "tcp://127.0.0.1:" + server.endpoint().port(),
                    "requires TLS: add tls=true");
            assertInstanceOf(HandshakeException.class, e);
        }
    }

    @Test
    void aTlsClientIsToldThePlainServerDoesNotUseTls() throws Exception {
        try (Communicator server = serve("tcp://127.0.0.1:0")) {
            IOException e = assertThrows(IOException.class,
                    () -> connect(pki.clientUri(server.endpoint().port(), SLOW_MACHINE)).close());
            assertTrue(e.getMessage().contains("does not use TLS"), e.getMessage());
            assertServes(server, "tcp://127.0.0.1:" + server.endpoint().port());
        }
    }

    @Test
    void requiredClientCertificatesKeepOutClientsWithoutATrustedOne() throws Exception {
        try (Communicator server = serve(pki.serverUri("tlsClientAuth=required"))) {
            int port = server.endpoint().port();
            assertThrows(HandshakeException.class, () -> connect(pki.clientUri(port, SLOW_MACHINE))
                    .close(), "a client without a certificate");
            IOException rogue = assertThrows(HandshakeException.class, () -> connect(
                    pki.clientUri(port, SLOW_MACHINE + "&" + pki.rogue.pem())).close());
            assertTrue(rogue.getMessage().contains("the peer refused the TLS handshake"), rogue.getMessage());
            assertServes(server, pki.clientUri(port, SLOW_MACHINE + "&" + pki.client.pem()));
        }
    }

    @Test
    void aPkcs12KeyStoreWithItsPasswordInAFileServes() throws Exception {
        String store = "tlsKeyStore=" + pki.server.store() + "&tlsKeyStorePasswordFile=" + pki.passwordFile();
        try (Communicator server = serve("tcp://127.0.0.1:0?tls=true&" + store)) {
            assertServes(server, pki.clientUri(server.endpoint().port(), SLOW_MACHINE));
        }
        Path wrong = Files.writeString(dir.resolve("wrong"), "not the password");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> serve(
                "tcp://127.0.0.1:0?tls=true&tlsKeyStore=" + pki.server.store() + "&tlsKeyStorePasswordFile=" + wrong));
        assertTrue(e.getMessage().contains("tlsKeyStore " + pki.server.store()), e.getMessage());
        assertTrue(e.getMessage().contains("wrong password"), e.getMessage());
    }

    @Test
    void theKeyStorePasswordMayComeFromAnEnvironmentVariable() {
        Endpoint e = Endpoint.parse("tcp://127.0.0.1:0?tls=true&tlsKeyStore=" + pki.server.store()
                + "&tlsKeyStorePasswordEnv=STORE_PW");
        assertNotNull(TlsConfig.of(e, Map.of("STORE_PW", TestPki.STORE_PASSWORD)));
        IllegalArgumentException unset = assertThrows(IllegalArgumentException.class,
                () -> TlsConfig.of(e, Map.of()));
        assertTrue(unset.getMessage().contains("STORE_PW"), unset.getMessage());
    }

    @Test
    void sharedSecretAuthenticationRunsInsideTls() throws Exception {
        Path secret = Files.writeString(dir.resolve("secret"), "a shared secret of some length");
        Files.setPosixFilePermissions(secret, PosixFilePermissions.fromString("rw-------"));
        Path other = Files.writeString(dir.resolve("other"), "another secret of some length");
        Files.setPosixFilePermissions(other, PosixFilePermissions.fromString("rw-------"));
        try (Communicator server = serve(pki.serverUri("secretFile=" + secret))) {
            int port = server.endpoint().port();
            assertThrows(AuthenticationException.class,
                    () -> connect(pki.clientUri(port, SLOW_MACHINE + "&secretFile=" + other)).close());
            assertThrows(AuthenticationException.class,
                    () -> connect(pki.clientUri(port, SLOW_MACHINE)).close());
            assertServes(server, pki.clientUri(port, SLOW_MACHINE + "&secretFile=" + secret));
        }
    }

    @Test
    void badTlsOptionsAreRefusedNamingWhatIsWrong() {
        assertMessage("tlsTrust is set but TLS is off", () -> connect("tcp://127.0.0.1:1?tlsTrust="
                + pki.ca));
        assertMessage("the server needs its certificate and key", () -> serve("tcp://127.0.0.1:0?tls=true"));
        assertMessage("does not belong to the first certificate", () -> serve("tcp://127.0.0.1:0?tls=true&tlsCert="
                + pki.server.chain() + "&tlsKey=" + pki.client.key()));
        assertMessage("holds no '-----BEGIN PRIVATE KEY-----' block", () -> serve(
                "tcp://127.0.0.1:0?tls=true&tlsCert=" + pki.server.chain() + "&tlsKey=" + pki.server.chain()));
        assertMessage("tlsCert and tlsKey go together", () -> serve("tcp://127.0.0.1:0?tls=true&tlsCert="
                + pki.server.chain()));
        assertMessage("wire=raw", () -> serve(pki.serverUri("wire=raw")));
        assertMessage("unknown tlsClientAuth 'sometimes'", () -> serve(pki.serverUri("tlsClientAuth=sometimes")));
    }

    private static void assertMessage(String expected, org.junit.jupiter.api.function.Executable call) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, call);
        assertTrue(e.getMessage().contains(expected), "expected '" + expected + "' in: " + e.getMessage());
    }

    @Test
    void peersThatStallTheTlsHandshakeAreDroppedWithoutStallingAccept() throws Exception {
        try (Communicator server = serve(pki.serverUri("handshakeTimeout=2s"))) {
            int port = server.endpoint().port();
            ByteBuffer partialHello = ByteBuffer.wrap(new byte[] {0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00});
            for (int i = 0; i < 40; i++) {
                SocketChannel c = Raw.connect(port);
                raw.add(c);
                if (i % 2 == 0) {
                    Raw.writeAll(c, partialHello.duplicate());
                }
            }
            assertServes(server, pki.clientUri(port, SLOW_MACHINE));
            List<Future<Boolean>> hungUp = new ArrayList<>();
            for (SocketChannel c : raw) {
                hungUp.add(helper.submit(() -> Raw.hungUp(c)));
            }
            for (Future<Boolean> f : hungUp) {
                assertTrue(f.get(60, TimeUnit.SECONDS), "every stalling peer is dropped");
            }
            assertServes(server, pki.clientUri(port, SLOW_MACHINE));
        }
    }
}
