package io.rdmacomm.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmacomm.api.Endpoint;
import io.rdmacomm.testkit.ChildJvm;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Which TLS engine {@code tlsEngine} gives: auto takes BoringSSL where netty-tcnative is on the class path and loads,
 * else the JDK's; openssl without it is refused naming what to add. The class path without Netty runs in a child
 * JVM ({@link TlsWithoutNetty}), a real TLS connection included.
 */
@Timeout(120)
class TlsEngineChoiceTest {
    private final TestPki pki = TestPki.get();

    @Test
    void autoTakesBoringSslWhereItLoadsAndJdkAsksForTheJdks() {
        assertTrue(engineOf(pki.serverUri("")).contains("engine openssl (BoringSSL"), engineOf(pki.serverUri("")));
        assertTrue(engineOf(pki.serverUri("tlsEngine=openssl")).contains("engine openssl (BoringSSL"));
        assertTrue(engineOf(pki.serverUri("tlsEngine=jdk")).contains("engine jdk ("), engineOf(pki.serverUri(
                "tlsEngine=jdk")));
    }

    @Test
    void anUnknownEngineIsRefusedNamingTheChoices() {
        IllegalArgumentException e = org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                () -> Endpoint.parse(pki.serverUri("tlsEngine=gnutls")));
        assertTrue(e.getMessage().contains("tlsEngine"), e.getMessage());
        assertTrue(e.getMessage().contains("gnutls"), e.getMessage());
    }

    @Test
    void withoutNettyAutoRunsOnTheJdkAndOpensslSaysWhatIsMissing() throws Exception {
        List<String> withoutNetty = Arrays.stream(System.getProperty("java.class.path").split(File.pathSeparator))
                .filter(entry -> !entry.contains(File.separator + "io" + File.separator + "netty" + File.separator))
                .toList();
        Process p = ChildJvm.of(Path.of(System.getProperty("java.home")), withoutNetty, TlsWithoutNetty.class,
                List.of(pki.serverUri(TestPki.CONTRACT_OPTIONS))).redirectErrorStream(true).start();
        assertTrue(p.waitFor(90, TimeUnit.SECONDS), "the child without Netty did not finish");
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, p.exitValue(), out);
        assertTrue(out.contains("openssl refused: tlsEngine=openssl needs BoringSSL through netty-tcnative"
                + " (io.netty:netty-handler and io.netty:netty-tcnative-boringssl-static on the class path)"), out);
        assertTrue(out.contains("auto: TLS [TLSv1.3], client certificates none, engine jdk ("), out);
        assertTrue(out.contains("echo over TLS: ok"), out);
    }

    private static String engineOf(String uri) {
        return TlsConfig.of(Endpoint.parse(uri)).toString();
    }
}
