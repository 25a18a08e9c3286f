package io.rdmacomm.gvirtus;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.rdmacomm.api.Endpoint;
import io.rdmacomm.testkit.fuzz.ParserChecks;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Timeout;

/**
 * {@code properties.json} as {@link GVirtuSConfig} reads it, on arbitrary bytes (as UTF-8 text): refused with an
 * {@link IOException} (not JSON) or an {@link IllegalArgumentException}, either naming the file, or read into at
 * least one endpoint of a scheme the file may name with a port from 1 to 65535; nothing else is thrown (a nesting
 * or number that Jackson cannot take included). Regression inputs:
 * {@code src/test/resources/io/rdmacomm/gvirtus/GVirtuSConfigFuzzTestInputs/}.
 */
@Timeout(120)
class GVirtuSConfigFuzzTest {
    private static final String SOURCE = "fuzz/properties.json";

    @FuzzTest(maxDuration = "30s")
    void propertiesJson(byte[] file) {
        String json = new String(file, StandardCharsets.UTF_8);
        ParserChecks.Outcome<List<Endpoint>> outcome = ParserChecks.parse(64L * json.length() + (4 << 20),
                () -> GVirtuSConfig.parse(json, SOURCE), IOException.class, IllegalArgumentException.class);
        if (!outcome.accepted()) {
            assertTrue(outcome.refusal().getMessage().startsWith(SOURCE + ": "),
                    "the error names the file: " + outcome.refusal().getMessage());
            return;
        }
        assertFalse(outcome.value().isEmpty(), "a file read names an endpoint");
        for (Endpoint e : outcome.value()) {
            assertTrue(e.scheme().equals("tcp") || e.scheme().equals("rdma"), "scheme of " + e);
            assertTrue(e.port() >= 1 && e.port() <= 65535, "port of " + e);
        }
    }
}
