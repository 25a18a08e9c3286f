package io.rdmacomm.rdma.ucx.ffm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** {@link LazyMemory}: a mapping is zeroed, usable, and resident only where it was written. */
@Timeout(30)
class LazyMemoryTest {
    private static final int MIB = 1 << 20;

    /** This process's resident anonymous memory in KiB ({@code RssAnon} of /proc/self/status). */
    private static long rssAnonKib() throws Exception {
        for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
            if (line.startsWith("RssAnon:")) {
                return Long.parseLong(line.replaceAll("\\D", ""));
            }
        }
        throw new AssertionError("no RssAnon in /proc/self/status");
    }

    @Test
    void aMappingBecomesResidentOnlyWhereItIsWritten() throws Exception {
        long before = rssAnonKib();
        ByteBuffer b = LazyMemory.allocate(256 * MIB);
        long mapped = rssAnonKib();
        assertTrue(mapped - before < 32 * 1024, "256 MiB mapped, untouched, made " + (mapped - before)
                + " KiB resident");
        assertEquals(0, b.get(255 * MIB), "fresh pages read zero");
        for (int i = 0; i < 128 * MIB; i += 4096) {
            b.put(i, (byte) 1);
        }
        long written = rssAnonKib();
        assertTrue(written - mapped >= 96 * 1024, "128 MiB written made only " + (written - mapped)
                + " KiB resident");
        assertEquals(1, b.get(4096));
        assertEquals(256 * MIB, b.capacity());
        assertTrue(b.isDirect());
    }
}
