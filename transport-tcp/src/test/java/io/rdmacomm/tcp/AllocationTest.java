package io.rdmacomm.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.Communicators;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The steady-state small-message path makes no per-call garbage, on either side, in every channel mode. Counts
 * bytes allocated by the threads (HotSpot's per-thread allocation counter), not time. One-off allocations of the
 * JIT (objects re-materialised on deoptimisation) are tolerated; a single object per round trip is not.
 */
class AllocationTest {
    private static final int WARM_UP = 15_000;
    private static final int MEASURED = 10_000;
    private static final com.sun.management.ThreadMXBean THREADS =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

    private final ExecutorService helper = Executors.newCachedThreadPool();

    @AfterEach
    void stopHelper() throws InterruptedException {
        helper.shutdownNow();
        assertTrue(helper.awaitTermination(10, TimeUnit.SECONDS));
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "?busyPoll=50us", "?readTimeout=10s"})
    @Timeout(120)
    void eightBytePingPongAllocatesNothing(String options) throws Exception {
        assertTrue(THREADS.isThreadAllocatedMemorySupported());
        THREADS.setThreadAllocatedMemoryEnabled(true);
        try (Communicator server = Communicators.serve("tcp://127.0.0.1:0" + options)) {
            Future<Long> echo = helper.submit(() -> {
                try (Communicator peer = server.accept()) {
                    ByteBuffer b = ByteBuffer.allocateDirect(8);
                    long[] allocated = new long[1];
                    for (int i = 0; i < WARM_UP + MEASURED; i++) {
                        if (i == WARM_UP) {
                            allocated[0] = allocatedByMe();
                        }
                        peer.readFully(b.clear());
                        peer.write(b.flip());
                        peer.sync();
                    }
                    return allocatedByMe() - allocated[0];
                }
            });
            try (Communicator client = Communicators.connect(server.endpoint().toString())) {
                ByteBuffer b = ByteBuffer.allocateDirect(8);
                long before = 0;
                for (int i = 0; i < WARM_UP + MEASURED; i++) {
                    if (i == WARM_UP) {
                        before = allocatedByMe();
                    }
                    b.clear().putLong(0, i);
                    client.write(b);
                    client.sync();
                    client.readFully(b.clear());
                    assertEquals(i, b.getLong(0));
                }
                long clientBytes = allocatedByMe() - before;
                long serverBytes = echo.get(30, TimeUnit.SECONDS);
                assertTrue(clientBytes < MEASURED, clientBytes + " bytes allocated by the client over " + MEASURED
                        + " round trips");
                assertTrue(serverBytes < MEASURED, serverBytes + " bytes allocated by the echoing side over "
                        + MEASURED + " round trips");
            }
        }
    }

    private static long allocatedByMe() {
        return THREADS.getThreadAllocatedBytes(Thread.currentThread().getId());
    }

    @Test
    @Timeout(10)
    void theAllocationCounterSeesAllocations() {
        long before = allocatedByMe();
        byte[][] keep = new byte[16][];
        for (int i = 0; i < keep.length; i++) {
            keep[i] = new byte[1024];
        }
        assertTrue(allocatedByMe() - before >= 16 * 1024, "counter works, so a 0 above means something");
        assertEquals(16, keep.length);
    }
}
