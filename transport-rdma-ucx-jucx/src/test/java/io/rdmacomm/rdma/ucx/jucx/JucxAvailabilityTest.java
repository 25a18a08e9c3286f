package io.rdmacomm.rdma.ucx.jucx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmacomm.api.CommunicatorProvider;
import io.rdmacomm.api.Communicators;
import io.rdmacomm.api.Endpoint;
import io.rdmacomm.api.TransportUnavailableException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The availability probe of rdma:// providers. */
@Timeout(60)
class JucxAvailabilityTest {

    /** Prints the rdma:// unavailability cause of the provider named in args[0] (for the child JVM below). */
    public static void main(String[] args) {
        CommunicatorProvider p = Communicators.provider("rdma");
        System.out.println("CAUSE " + p.unavailabilityCause(Endpoint.parse("rdma://127.0.0.1:1?provider=" + args[0]))
                .orElse("none"));
    }

    @Test
    void ucxIsAvailableWhereLibucxIsInstalled() {
        assertEquals(Optional.empty(), Communicators.provider("rdma")
                .unavailabilityCause(Endpoint.parse("rdma://127.0.0.1:1")));
    }

    @Test
    void verbsNamesItsCauseAndOpenFailsWithIt() {
        Endpoint verbs = Endpoint.parse("rdma://127.0.0.1:1?provider=verbs");
        Optional<String> cause = Communicators.provider("rdma").unavailabilityCause(verbs);
        assertTrue(cause.isPresent(), "no RDMA device here, yet verbs claims to be available");
        TransportUnavailableException e = org.junit.jupiter.api.Assertions.assertThrows(
                TransportUnavailableException.class, () -> Communicators.open(verbs));
        assertTrue(e.getMessage().contains(cause.get()), e.getMessage());
    }

    @Test
    void withoutALoadableLibucpTheCauseSaysSoAndHowToFixIt(@TempDir Path dir) throws Exception {
        // a libucp.so.0 that is not a library, ahead on the search path, makes libjucx fail to load as a missing
        // libucx0 would (the dynamic loader skips an empty file there and finds the installed one); JUCX first
        // loads libucp.so from java.library.path where libucx-dev installed it, so that path must not reach it
        Files.writeString(dir.resolve("libucp.so.0"), "not a shared library\n".repeat(16));
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        ProcessBuilder pb = new ProcessBuilder(java, "-Djava.library.path=" + dir, "-cp",
                System.getProperty("java.class.path"),
                JucxAvailabilityTest.class.getName(), "ucx").redirectErrorStream(true);
        pb.environment().put("LD_LIBRARY_PATH", dir.toString());
        pb.environment().put("UCX_ERROR_SIGNALS", "");
        Process p = pb.start();
        String out;
        try {
            out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertTrue(p.waitFor(30, TimeUnit.SECONDS));
        } finally {
            p.destroyForcibly();
        }
        String cause = out.lines().filter(l -> l.startsWith("CAUSE ")).findFirst()
                .orElseThrow(() -> new IOException("no cause printed: " + out));
        assertTrue(cause.contains("libucx") && cause.contains("apt-get install libucx0"), cause);
    }
}
