package io.rdmacomm.kvstore;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmacomm.kvstore.cli.KvServerMain;
import io.rdmacomm.testkit.ChildJvm;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** A memory pool that leaves the JVM no direct memory for anything else is refused at start, saying so. */
@Timeout(120)
class KvServerMemoryTest {
    private static final long MIB = 1L << 20;

    @Test
    void aPoolMustLeaveDirectMemoryForTheConnections() {
        assertNull(KvServer.poolTooLarge(512 * MIB, 1024 * MIB, 0));
        assertNull(KvServer.poolTooLarge(1024 * MIB - KvServer.DIRECT_HEADROOM, 1024 * MIB, 0), "exactly enough");
        String refused = KvServer.poolTooLarge(1024 * MIB, 1024 * MIB, 0);
        assertNotNull(refused, "a pool of all the direct memory");
        assertTrue(refused.contains("--memory") && refused.contains("MaxDirectMemorySize"), refused);
        assertNotNull(KvServer.poolTooLarge(512 * MIB, 1024 * MIB, 500 * MIB), "what is in use already counts");
        assertNull(KvServer.poolTooLarge(1L << 40, -1, 0), "an unknown limit is left to the allocation");
        assertTrue(KvServer.maxDirectMemory() > 0, "this JVM's limit is known");
    }

    @Test
    void aServerWhosePoolDoesNotFitExitsNamingBothSettings() throws Exception {
        Process p = ChildJvm.of(List.of("-XX:MaxDirectMemorySize=96m"), KvServerMain.class, List.of("--listen",
                "127.0.0.1:0", "--data-endpoint", "tcp://127.0.0.1:0", "--memory", "64m", "--max-value", "1m"))
                .start();
        p.getOutputStream().close();
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "kv-server did not exit");
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        String err = ChildJvm.withoutJucxNotice(new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8));
        assertNotEquals(0, p.exitValue(), "exit status; stderr: " + err);
        assertEquals("", out.strip(), "it never said it was listening");
        assertTrue(err.contains("the memory pool of 64") && err.contains("MaxDirectMemorySize")
                && err.contains("--memory"), err);
    }
}
