package io.rdmacomm.kvstore.cli;

import io.rdmacomm.kvstore.KvClient;
import io.rdmacomm.kvstore.KvControlClient;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.HdrHistogram.Histogram;

/**
 * One benchmark: C sessions opened before measuring (data-path sessions share one control-plane connection; the
 * control-plane benchmark gives each client its own), K keys preloaded, a warm-up, then every client thread
 * released at once for its share of the operations. A thread drives one client or several: it keeps one operation
 * in flight on each of its clients (sent, not yet answered) and takes their answers in turn, starting a client's next
 * operation as soon as it has the last one's answer, as redis-benchmark's event loop drives its connections. Each
 * thread records its latencies (from sending a request to having its answer) in histograms of its own (allocated
 * before), so measuring adds no allocation or sharing to the operations.
 */
final class BenchRun {
    private static final long HIGHEST_NANOS = TimeUnit.SECONDS.toNanos(60);
    private static final long START_TIMEOUT_SECONDS = 600;

    /**
     * One client session: over the data plane, or over the control plane (where start does the whole call, so a
     * control-plane client has one thread of its own).
     */
    private interface Target extends AutoCloseable {
        void startGet(byte[] key) throws IOException;

        void startPut(byte[] key, ByteBuffer value, byte[] valueArray) throws IOException;

        /** Waits for the answer to what was started. */
        void finish(boolean get) throws IOException;

        @Override
        void close() throws IOException;
    }

    private final KvClientMain client;
    private final boolean dataPath;
    private final int clients;
    private final int threadCount;
    private final int valueSize;
    private final double getRatio;
    private final byte[][] keys;
    private final AtomicBoolean failed = new AtomicBoolean();

    BenchRun(KvClientMain client, boolean dataPath, int clients, int threads, int valueSize, double getRatio,
            int keyCount) {
        this.client = client;
        this.dataPath = dataPath;
        this.clients = clients;
        this.threadCount = threads;
        this.valueSize = valueSize;
        this.getRatio = getRatio;
        this.keys = new byte[keyCount][];
        for (int i = 0; i < keyCount; i++) {
            keys[i] = ("bench-" + i).getBytes(StandardCharsets.US_ASCII);
        }
    }

    BenchResult run(long warmup, long ops) throws Exception {
        List<Target> targets = new ArrayList<>();
        ExecutorService threads = Executors.newFixedThreadPool(threadCount, r -> {
            Thread t = new Thread(r, "kv-bench");
            t.setDaemon(true);
            return t;
        });
        try (KvControlClient control = client.control()) {
            for (int i = 0; i < clients; i++) {
                targets.add(open(i, control));
            }
            byte[] value = new byte[valueSize];
            new SplittableRandom(42).nextBytes(value);
            for (byte[] key : keys) {
                targets.get(0).startPut(key, ByteBuffer.wrap(value), value);
                targets.get(0).finish(false);
            }
            CountDownLatch ready = new CountDownLatch(threadCount);
            CountDownLatch start = new CountDownLatch(1);
            List<Future<Worker>> results = new ArrayList<>();
            for (int t = 0; t < threadCount; t++) {
                List<Target> driven = new ArrayList<>();
                long clientsDriven = 0;
                for (int i = t; i < clients; i += threadCount) {
                    driven.add(targets.get(i));
                    clientsDriven++;
                }
                // operations in proportion to the clients a thread drives
                Worker w = new Worker(driven, t, warmup * clientsDriven / clients, share(ops, t), ready, start);
                results.add(threads.submit(w));
            }
            if (!ready.await(START_TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
                failed.set(true);
            }
            long t0 = System.nanoTime();
            start.countDown();
            List<Worker> done = new ArrayList<>();
            for (Future<Worker> f : results) {
                try {
                    done.add(f.get());
                } catch (ExecutionException e) {
                    failed.set(true);
                    throw e.getCause() instanceof Exception cause ? cause : e;
                }
            }
            return result(done, t0, control.stats().dataEndpoint());
        } finally {
            failed.set(true);
            threads.shutdownNow();
            for (Target t : targets) {
                t.close();
            }
        }
    }

    /** Thread {@code t}'s share of {@code total} operations, in proportion to the clients it drives. */
    private long share(long total, int t) {
        long before = 0;
        long upTo = 0;
        for (int i = 0; i < clients; i++) {
            if (i % threadCount < t) {
                before++;
            }
            if (i % threadCount <= t) {
                upTo++;
            }
        }
        return total * upTo / clients - total * before / clients;
    }

    /** Client {@code i}: a session sharing the run's control plane {@code shared}, or a control-plane client. */
    private Target open(int i, KvControlClient shared) throws IOException {
        String name = "kv-client bench #" + i;
        if (dataPath) {
            // each client registers what its values need, not --buffer: 16 clients of 64 MiB would be 1 GiB; the
            // sessions of this process share one control-plane connection, as a program with many sessions does
            KvClient kv = KvClient.connect(shared, client.options(name).withBuffer(Math.max(valueSize, 4096)));
            return new Target() {
                @Override
                public void startGet(byte[] key) throws IOException {
                    kv.startGet(key);
                }

                @Override
                public void startPut(byte[] key, ByteBuffer value, byte[] valueArray) throws IOException {
                    kv.startPut(key, value);
                }

                @Override
                public void finish(boolean get) throws IOException {
                    if (get) {
                        kv.finishGet();
                    } else {
                        kv.finishPut();
                    }
                }

                @Override
                public void close() throws IOException {
                    kv.close();
                }
            };
        }
        KvControlClient control = client.control();
        return new Target() {
            @Override
            public void startGet(byte[] key) throws IOException {
                control.get(key);
            }

            @Override
            public void startPut(byte[] key, ByteBuffer value, byte[] valueArray) throws IOException {
                control.put(key, valueArray);
            }

            @Override
            public void finish(boolean get) {
            }

            @Override
            public void close() {
                control.close();
            }
        };
    }

    private BenchResult result(List<Worker> done, long t0, String endpoint) {
        Histogram gets = new Histogram(HIGHEST_NANOS, 3);
        Histogram puts = new Histogram(HIGHEST_NANOS, 3);
        long end = t0;
        long allocated = 0;
        for (Worker w : done) {
            gets.add(w.gets);
            puts.add(w.puts);
            end = Math.max(end, w.endNanos);
            allocated += w.allocatedBytes;
        }
        Histogram all = gets.copy();
        all.add(puts);
        long ops = all.getTotalCount();
        double seconds = (end - t0) / 1e9;
        return new BenchResult(dataPath ? "data" : "control", endpoint, clients, threadCount, valueSize, getRatio,
                keys.length, ops, seconds, ops / seconds, micros(all, 50), micros(all, 99), gets.getTotalCount(),
                micros(gets, 50), micros(gets, 99), puts.getTotalCount(), micros(puts, 50), micros(puts, 99),
                ops == 0 ? 0 : (double) allocated / ops);
    }

    private static double micros(Histogram h, double percentile) {
        return h.getTotalCount() == 0 ? 0 : h.getValueAtPercentile(percentile) / 1000.0;
    }

    /** One client thread and the clients it drives: warm-up, wait for the start, measured operations. */
    private final class Worker implements java.util.concurrent.Callable<Worker> {
        private final Target[] targets;
        private final SplittableRandom random;
        private final long warmup;
        private final long ops;
        private final CountDownLatch ready;
        private final CountDownLatch start;
        private final Histogram gets = new Histogram(HIGHEST_NANOS, 3);
        private final Histogram puts = new Histogram(HIGHEST_NANOS, 3);
        private final byte[] valueArray = new byte[valueSize];
        private final ByteBuffer value = ByteBuffer.wrap(valueArray);
        /** Per client: whether an operation is in flight, whether it is a GET, when it was sent. */
        private final boolean[] inFlight;
        private final boolean[] isGet;
        private final long[] sentNanos;
        private long endNanos;
        private long allocatedBytes;

        Worker(List<Target> targets, int index, long warmup, long ops, CountDownLatch ready, CountDownLatch start) {
            this.targets = targets.toArray(new Target[0]);
            this.random = new SplittableRandom(1000 + index);
            this.warmup = warmup;
            this.ops = ops;
            this.ready = ready;
            this.start = start;
            this.inFlight = new boolean[this.targets.length];
            this.isGet = new boolean[this.targets.length];
            this.sentNanos = new long[this.targets.length];
            random.nextBytes(valueArray);
        }

        @Override
        public Worker call() throws Exception {
            operate(warmup, false);
            ready.countDown();
            if (!start.await(START_TIMEOUT_SECONDS, TimeUnit.SECONDS) || failed.get()) {
                return this;
            }
            com.sun.management.ThreadMXBean meter = allocationMeter();
            long before = meter == null ? 0 : meter.getCurrentThreadAllocatedBytes();
            operate(ops, true);
            endNanos = System.nanoTime();
            allocatedBytes = meter == null ? 0 : meter.getCurrentThreadAllocatedBytes() - before;
            return this;
        }

        /** {@code count} operations over this thread's clients, one in flight on each, until all are answered. */
        private void operate(long count, boolean record) throws IOException {
            long sent = 0;
            for (int i = 0; i < targets.length && sent < count; i++, sent++) {
                send(i);
            }
            for (boolean any = sent > 0; any; ) {
                any = false;
                for (int i = 0; i < targets.length; i++) {
                    if (!inFlight[i]) {
                        continue;
                    }
                    targets[i].finish(isGet[i]);
                    long elapsed = System.nanoTime() - sentNanos[i];
                    inFlight[i] = false;
                    if (record) {
                        (isGet[i] ? gets : puts).recordValue(Math.min(elapsed, HIGHEST_NANOS));
                    }
                    if (sent < count && !failed.get()) {
                        send(i);
                        sent++;
                        any = true;
                    }
                }
            }
        }

        private void send(int i) throws IOException {
            byte[] key = keys[random.nextInt(keys.length)];
            boolean get = random.nextDouble() < getRatio;
            isGet[i] = get;
            sentNanos[i] = System.nanoTime();
            if (get) {
                targets[i].startGet(key);
            } else {
                targets[i].startPut(key, value, valueArray);
            }
            inFlight[i] = true;
        }
    }

    private static com.sun.management.ThreadMXBean allocationMeter() {
        return ManagementFactory.getThreadMXBean() instanceof com.sun.management.ThreadMXBean t
                && t.isThreadAllocatedMemorySupported() && t.isThreadAllocatedMemoryEnabled() ? t : null;
    }
}
