package io.rdmacomm.clientcomm.bench;

import java.io.PrintStream;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * Progress of a long run on stderr, printed about once a second by its own thread so the measured loop only
 * stores a counter (and allocates nothing). {@link #silent()} prints nothing and starts no thread.
 */
public class Progress implements AutoCloseable {
    private static final long PERIOD_MS = 1000;

    private volatile long done;

    private Progress() {
    }

    /** A progress that prints nothing. */
    public static Progress silent() {
        return new Progress();
    }

    /** Starts printing "{@code what}: done/total unit (percent)" to {@code out} until {@link #close()}. */
    public static Progress start(String what, long total, String unit, PrintStream out) {
        return new Printing(what, total, unit, out);
    }

    /** Records how much is done; cheap enough for a measured loop (one volatile store). */
    public final void update(long value) {
        done = value;
    }

    public final long done() {
        return done;
    }

    @Override
    public void close() {
    }

    private static final class Printing extends Progress {
        private final CountDownLatch closed = new CountDownLatch(1);
        private final Thread thread;

        public Printing(String what, long total, String unit, PrintStream out) {
            thread = new Thread(() -> {
                try {
                    while (!closed.await(PERIOD_MS, TimeUnit.MILLISECONDS)) {
                        long d = done();
                        out.printf("%s: %d/%d %s (%.0f%%)%n", what, d, total, unit,
                                total == 0 ? 100.0 : 100.0 * d / total);
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }, "rdmacomm-bench-progress");
            thread.setDaemon(true);
            thread.start();
        }

        @Override
        public void close() {
            closed.countDown();
            try {
                thread.join(TimeUnit.SECONDS.toMillis(5));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
