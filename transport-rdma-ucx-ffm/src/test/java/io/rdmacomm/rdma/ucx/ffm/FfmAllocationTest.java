package io.rdmacomm.rdma.ucx.ffm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.Communicators;
import io.rdmacomm.rdma.RdmaCommunicator;
import io.rdmacomm.testkit.ChildJvm;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * An 8-byte rdma:// round trip on ucx-ffm allocates nothing on the calling thread once warm: write, sync, and a
 * read that busy-polls the worker, so the active-message up-calls that deliver the echo run on this thread too.
 * The echo server is a second JVM, as in production (two channels of one process talk through UCX's self
 * transport, a path of its own).
 */
@Timeout(120)
class FfmAllocationTest {
    private static final int ROUND_TRIPS = 20_000;

    @Test
    void eightByteRoundTripsAllocateNothingOnceWarm() throws Exception {
        Process echo = ChildJvm.of(EchoMain.class, List.of(FfmTestHooks.URI)).redirectError(
                ProcessBuilder.Redirect.INHERIT).start();
        try (BufferedReader out = new BufferedReader(new InputStreamReader(echo.getInputStream(),
                StandardCharsets.UTF_8))) {
            String line = out.readLine();
            assertNotNull(line, "the echo server ended before it served");
            assertTrue(line.startsWith("SERVING "), line);
            String endpoint = line.substring("SERVING ".length());
            com.sun.management.ThreadMXBean mx = (com.sun.management.ThreadMXBean)
                    ManagementFactory.getThreadMXBean();
            try (Communicator c = Communicators.connect(endpoint + "&busyPoll=10ms&readTimeout=10s")) {
                assertEquals("ucx-ffm", ((RdmaCommunicator) c).providerName());
                ByteBuffer b = ByteBuffer.allocateDirect(8);
                long checksum = 0;
                long least = Long.MAX_VALUE;
                // warm-up, then the least of three measured rounds: the JVM allocates now and then on its own
                for (int round = 0; round < 4; round++) {
                    long before = mx.getCurrentThreadAllocatedBytes();
                    for (int i = 0; i < ROUND_TRIPS; i++) {
                        b.clear().putLong(0, i);
                        c.write(b);
                        c.sync();
                        b.clear();
                        c.readFully(b);
                        checksum += b.getLong(0);
                    }
                    long allocated = mx.getCurrentThreadAllocatedBytes() - before;
                    if (round > 0) {
                        least = Math.min(least, allocated);
                    }
                }
                System.out.println("ucx-ffm: " + least + " bytes allocated by " + ROUND_TRIPS + " round trips");
                assertTrue(least < 1024, least + " bytes allocated by " + ROUND_TRIPS + " 8-byte round trips");
                assertEquals(4L * ((long) ROUND_TRIPS * (ROUND_TRIPS - 1) / 2), checksum);
            }
        } finally {
            echo.destroy();
            if (!echo.waitFor(10, TimeUnit.SECONDS)) {
                echo.destroyForcibly();
            }
        }
    }
}
