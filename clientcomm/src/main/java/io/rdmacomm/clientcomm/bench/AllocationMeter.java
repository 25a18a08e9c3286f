package io.rdmacomm.clientcomm.bench;

import java.lang.management.ManagementFactory;

/**
 * Bytes allocated by the current thread, from HotSpot's per-thread allocation counter
 * ({@link com.sun.management.ThreadMXBean#getCurrentThreadAllocatedBytes()}). Reading the counter may itself
 * allocate a little; {@link #overhead()} measures that once so a measured span can subtract it.
 */
public final class AllocationMeter {
    private final com.sun.management.ThreadMXBean threads;
    private final long overhead;

    private AllocationMeter(com.sun.management.ThreadMXBean threads) {
        this.threads = threads;
        long min = Long.MAX_VALUE;
        for (int i = 0; i < 5; i++) {
            long a = threads.getCurrentThreadAllocatedBytes();
            long b = threads.getCurrentThreadAllocatedBytes();
            min = Math.min(min, b - a);
        }
        this.overhead = min;
    }

    /**
     * The meter of this JVM.
     *
     * @throws UnsupportedOperationException if the JVM does not count allocation per thread
     */
    public static AllocationMeter create() {
        if (!(ManagementFactory.getThreadMXBean() instanceof com.sun.management.ThreadMXBean threads)
                || !threads.isThreadAllocatedMemorySupported()) {
            throw new UnsupportedOperationException("this JVM (" + System.getProperty("java.vm.name")
                    + ") does not count allocated bytes per thread; run the benchmark on HotSpot");
        }
        if (!threads.isThreadAllocatedMemoryEnabled()) {
            threads.setThreadAllocatedMemoryEnabled(true);
        }
        return new AllocationMeter(threads);
    }

    /** The current thread's allocation counter in bytes. */
    public long allocatedBytes() {
        return threads.getCurrentThreadAllocatedBytes();
    }

    /**
     * Bytes allocated in the heap by all threads of this JVM since it started, terminated ones included
     * ({@code com.sun.management.ThreadMXBean.getTotalThreadAllocatedBytes()}, JDK 21+), or -1 where it is not
     * counted.
     */
    public long processAllocatedBytes() {
        if (TOTAL != null) {
            try {
                return (long) TOTAL.invoke(threads);
            } catch (UnsupportedOperationException e) {
                return -1;
            } catch (Throwable e) {
                throw new IllegalStateException(e);
            }
        }
        // JDK 17-20: the live threads' counters (a thread that ends within the span drops out)
        long sum = 0;
        for (long a : threads.getThreadAllocatedBytes(threads.getAllThreadIds())) {
            sum += Math.max(0, a);
        }
        return sum;
    }

    /** ThreadMXBean.getTotalThreadAllocatedBytes() of JDK 21+, looked up: the build targets JDK 17. */
    private static final java.lang.invoke.MethodHandle TOTAL = total();

    private static java.lang.invoke.MethodHandle total() {
        try {
            return java.lang.invoke.MethodHandles.publicLookup().findVirtual(com.sun.management.ThreadMXBean.class,
                    "getTotalThreadAllocatedBytes", java.lang.invoke.MethodType.methodType(long.class));
        } catch (ReflectiveOperationException e) {
            return null;
        }
    }

    /** What one {@link #allocatedBytes()} call adds to the counter, to subtract from a measured span. */
    public long overhead() {
        return overhead;
    }

    /** Bytes allocated between two readings, less the cost of the reading, never negative. */
    public long between(long before, long after) {
        return Math.max(0, after - before - overhead);
    }
}
