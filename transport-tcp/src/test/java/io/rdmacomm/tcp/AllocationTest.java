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

    /**
     * The event loop's path: the serving thread arms {@code notifyReadable}, is told (by the readiness thread, or
     * at once), reads what {@code available()} says and answers; neither it nor the readiness thread allocates per
     * round trip. The serving thread parks and is unparked (neither allocates).
     */
    @ParameterizedTest
    @ValueSource(strings = {"", "?liveness=0"})
    @Timeout(120)
    void anEventLoopsArmAvailableReadAllocatesNothing(String options) throws Exception {
        assertTrue(THREADS.isThreadAllocatedMemorySupported());
        THREADS.setThreadAllocatedMemoryEnabled(true);
        int warmUp = 10_000;
        int measured = 10_000;
        try (Communicator server = Communicators.serve("tcp://127.0.0.1:0" + options)) {
            long[] readinessBytes = new long[1];
            Future<Long> loop = helper.submit(() -> {
                try (Communicator peer = server.accept()) {
                    Thread me = Thread.currentThread();
                    java.util.concurrent.atomic.AtomicBoolean told = new java.util.concurrent.atomic.AtomicBoolean();
                    Runnable listener = () -> {
                        told.set(true);
                        java.util.concurrent.locks.LockSupport.unpark(me);
                    };
                    ByteBuffer b = ByteBuffer.allocateDirect(8);
                    long allocated = 0;
                    Thread readiness = null;
                    for (int i = 0; i < warmUp + measured; i++) {
                        if (i == warmUp) {
                            readiness = thread("rdmacomm-tcp-readiness");
                            readinessBytes[0] = THREADS.getThreadAllocatedBytes(readiness.getId());
                            allocated = allocatedByMe();
                        }
                        b.clear();
                        while (b.hasRemaining()) {
                            int n = peer.available();
                            if (n == 0) {
                                told.set(false);
                                peer.notifyReadable(listener);
                                while (!told.get()) {
                                    java.util.concurrent.locks.LockSupport.park();
                                }
                                continue;
                            }
                            b.limit(b.position() + Math.min(n, b.remaining()));
                            peer.read(b);
                            b.limit(b.capacity());
                        }
                        peer.write(b.flip());
                        peer.sync();
                    }
                    allocated = allocatedByMe() - allocated;
                    readinessBytes[0] = THREADS.getThreadAllocatedBytes(readiness.getId()) - readinessBytes[0];
                    return allocated;
                }
            });
            try (Communicator client = Communicators.connect(server.endpoint().toString())) {
                ByteBuffer b = ByteBuffer.allocateDirect(8);
                for (int i = 0; i < warmUp + measured; i++) {
                    b.clear().putLong(0, i);
                    client.write(b);
                    client.sync();
                    client.readFully(b.clear());
                    assertEquals(i, b.getLong(0));
                }
                long loopBytes = loop.get(30, TimeUnit.SECONDS);
                assertTrue(loopBytes < measured, loopBytes + " bytes allocated by the serving thread over "
                        + measured + " round trips");
                assertTrue(readinessBytes[0] < measured, readinessBytes[0] + " bytes allocated by the readiness"
                        + " thread over " + measured + " round trips");
            }
        }
    }

    private static Thread thread(String name) {
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.getName().equals(name)) {
                return t;
            }
        }
        throw new AssertionError("no thread " + name);
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
