package io.rdmacomm.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmacomm.api.Endpoint;
import io.rdmacomm.api.EndpointOption;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

@Timeout(10)
class SecretOptionsTest {
    @Command(name = "probe")
    static final class Probe {
        @Mixin
        SecretOptions secret;
    }

    @Test
    void theOptionsBecomeEndpointOptionsAndAreCheckedAtOnce(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("key");
        Files.writeString(file, "sixteen bytes or more");
        Probe p = new Probe();
        new CommandLine(p).parseArgs("--secret-file", file.toString());
        Endpoint e = p.secret.applyTo(Endpoint.parse("tcp://127.0.0.1:9"));
        assertEquals(file.toString(), e.string(EndpointOption.SECRET_FILE));

        Probe missing = new Probe();
        new CommandLine(missing).parseArgs("--secret-env", "RDMACOMM_TEST_NO_SUCH_VARIABLE");
        String m = assertThrows(IllegalArgumentException.class,
                () -> missing.secret.applyTo(Endpoint.parse("tcp://127.0.0.1:9"))).getMessage();
        assertTrue(m.contains("RDMACOMM_TEST_NO_SUCH_VARIABLE"), m);
    }

    @Test
    void onlyAReachableEndpointWithoutASecretIsWarnedAbout(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("key");
        Files.writeString(file, "sixteen bytes or more");
        assertTrue(SecretOptions.exposureWarning(Endpoint.parse("tcp://0.0.0.0:9999")).orElseThrow()
                .contains("without a shared secret"));
        assertTrue(SecretOptions.exposureWarning(Endpoint.parse("tcp://127.0.0.1:9999")).isEmpty());
        assertTrue(SecretOptions.exposureWarning(Endpoint.parse("tcp://[::1]:9999")).isEmpty());
        assertTrue(SecretOptions.exposureWarning(Endpoint.parse("tcp://0.0.0.0:9999?secretFile=" + file)).isEmpty());
    }
}
