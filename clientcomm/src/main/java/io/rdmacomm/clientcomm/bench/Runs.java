package io.rdmacomm.clientcomm.bench;

import java.io.IOException;
import java.nio.ByteBuffer;
import org.HdrHistogram.Histogram;

/** The measured loops. Everything they touch per iteration is allocated before they start. */
public final class Runs {
    /** Round trips above this (in ns) are recorded as this; the histogram never resizes in the loop. */
    public static final long HIGHEST_NANOS = 60_000_000_000L;
    private static final int SIGNIFICANT_DIGITS = 3;
    /** Progress is published every this many iterations (a power of two, tested with a mask). */
    private static final int PROGRESS_EVERY = 1024;
    /** Round trips per warm-up call: small, so that the measured method is invoked often enough to compile. */
    private static final int WARMUP_CHUNK = 16;

    private Runs() {
    }

    /** A histogram for round trips in nanoseconds that covers up to {@link #HIGHEST_NANOS} without resizing. */
    public static Histogram newHistogram() {
        return new Histogram(HIGHEST_NANOS, SIGNIFICANT_DIGITS);
    }

    /**
     * Runs {@code warmup} unmeasured and then {@code iterations} measured round trips; returns the bytes this
     * thread allocated during the measured ones. Round-trip times in nanoseconds go to {@code histogram}.
     * The warm-up goes through the very loop that is measured, in many short calls, so that resolving its call
     * sites and compiling the whole method (not only an on-stack replacement of its loop), which allocate, happen
     * before the allocation counter is read.
     */
    public static long latency(RoundTrip rt, long warmup, long iterations, Histogram histogram, Progress progress,
            AllocationMeter meter) throws IOException {
        return latency(rt, warmup, iterations, histogram, null, progress, meter).thread();
    }

    /**
     * Bytes allocated during the measured round trips: by the measuring thread, and by all threads of this JVM
     * (-1 where the JVM does not count that).
     */
    public record Allocated(long thread, long process) {
    }

    /**
     * As {@link #latency(RoundTrip, long, long, Histogram, Progress, AllocationMeter)}; in addition, when
     * {@code window} is not null, the measured round trips are also written round-robin into it, so that it ends
     * with the last {@code min(window.length, iterations)} of them (oldest overwritten first): the samples
     * ucx_perftest computes its percentiles from (the last 2048 of its iterations).
     */
    public static Allocated latency(RoundTrip rt, long warmup, long iterations, Histogram histogram, long[] window,
            Progress progress, AllocationMeter meter) throws IOException {
        return latency(rt, warmup, iterations, histogram, window, progress, meter, null);
    }

    /**
     * As above; {@code pause}, when not null, is awaited after the warm-up (before the allocation counters are read)
     * and after the measured round trips (after they are read), outside the measured span.
     */
    public static Allocated latency(RoundTrip rt, long warmup, long iterations, Histogram histogram, long[] window,
            Progress progress, AllocationMeter meter, Pause pause) throws IOException {
        for (long done = 0; done < warmup; done += WARMUP_CHUNK) {
            measured(rt, done, Math.min(WARMUP_CHUNK, warmup - done), histogram, null, progress);
        }
        histogram.reset();
        if (pause != null) {
            pause.await("warm");
        }
        long processBefore = meter.processAllocatedBytes();
        long before = meter.allocatedBytes();
        measured(rt, warmup, iterations, histogram, window, progress);
        long after = meter.allocatedBytes();
        long processAfter = meter.processAllocatedBytes();
        if (pause != null) {
            pause.await("done");
        }
        progress.update(warmup + iterations);
        return new Allocated(meter.between(before, after),
                processBefore < 0 || processAfter < 0 ? -1 : Math.max(0, processAfter - processBefore));
    }

    /** A pause between the phases of a latency run: {@code phase} is "warm" or "done". */
    public interface Pause {
        void await(String phase) throws IOException;

        /** Creates {@code file} holding the phase and waits until something deletes it. */
        static Pause file(java.nio.file.Path file) {
            return phase -> {
                java.nio.file.Files.writeString(file, phase + "\n");
                while (java.nio.file.Files.exists(file)) {
                    try {
                        Thread.sleep(1);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        throw new java.io.InterruptedIOException("interrupted in the pause after " + phase);
                    }
                }
            };
        }
    }

    private static void measured(RoundTrip rt, long done, long iterations, Histogram histogram, long[] window,
            Progress progress) throws IOException {
        int slot = 0;
        for (long i = 0; i < iterations; i++) {
            long start = System.nanoTime();
            rt.roundTrip();
            long elapsed = System.nanoTime() - start;
            histogram.recordValue(Math.min(elapsed, HIGHEST_NANOS));
            if (window != null) {
                window[slot] = elapsed;
                slot = slot + 1 == window.length ? 0 : slot + 1;
            }
            if ((i & (PROGRESS_EVERY - 1)) == 0) {
                progress.update(done + i);
            }
        }
    }

    /**
     * Streams {@code total} bytes in writes of {@code buffer.capacity()} bytes (the last one shorter) and
     * returns the nanoseconds from the first write to the acknowledgement.
     *
     * @throws java.io.IOException if the receiver acknowledges another count than {@code total}
     */
    public static long bandwidth(BulkSender sender, ByteBuffer buffer, long total, Progress progress)
            throws IOException {
        return bandwidth(sender, buffer, 0, total, progress);
    }

    /**
     * Streams {@code warmup} bytes untimed and then {@code total} bytes, timed from the first of those to the
     * receiver's acknowledgement of all {@code warmup + total} (a warm-up still in flight when the clock starts is
     * at most the transport's buffering, counted against the timed part).
     */
    public static long bandwidth(BulkSender sender, ByteBuffer buffer, long warmup, long total, Progress progress)
            throws IOException {
        int size = buffer.capacity();
        long all = warmup + total;
        long start = warmup == 0 ? System.nanoTime() : 0;
        long sent = 0;
        while (sent < all) {
            if (sent == warmup && warmup > 0) {
                start = System.nanoTime();
            }
            int n = (int) Math.min(size, (sent < warmup ? warmup : all) - sent);
            buffer.clear().limit(n);
            sender.write(buffer);
            sent += n;
            progress.update(sent);
        }
        long acked = sender.awaitAck();
        long elapsed = System.nanoTime() - start;
        if (acked != all) {
            throw new IOException("the receiver acknowledged " + acked + " bytes, expected " + all);
        }
        return elapsed;
    }
}
