package io.rdmacomm.testkit;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * Captures what the tests' SLF4J binding (slf4j-simple, which looks up {@code System.err} on every message) logs,
 * line by line, while still passing it on; tests wait for a line instead of sleeping, or act on a line as it is
 * written. {@link #close()} puts the original {@code System.err} back.
 */
public final class LogCapture implements AutoCloseable {
    private final PrintStream original = System.err;
    private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();
    private final List<String> seen = new ArrayList<>();
    private final Consumer<String> onLine;

    public LogCapture() {
        this(line -> { });
    }

    /**
     * @param onLine runs on the logging thread with each line as it is written, before the logging call returns
     *               (what the logger's caller does next has not happened yet)
     */
    public LogCapture(Consumer<String> onLine) {
        this.onLine = onLine;
        System.setErr(new PrintStream(new LineSplitter(), true, StandardCharsets.UTF_8));
    }

    /** Waits up to 10 s for a logged line containing every fragment, and returns it. */
    public String await(String... fragments) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        for (String line : seen) {
            if (containsAll(line, fragments)) {
                return line;
            }
        }
        while (true) {
            String line = lines.poll(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            if (line == null) {
                fail("no log line with " + List.of(fragments) + " within 10 s; seen: " + seen);
            }
            seen.add(line);
            if (containsAll(line, fragments)) {
                return line;
            }
        }
    }

    private static boolean containsAll(String line, String... fragments) {
        for (String f : fragments) {
            if (!line.contains(f)) {
                return false;
            }
        }
        return true;
    }

    @Override
    public void close() {
        System.setErr(original);
    }

    private final class LineSplitter extends OutputStream {
        private final ByteArrayOutputStream line = new ByteArrayOutputStream();

        @Override
        public synchronized void write(int b) {
            original.write(b);
            if (b == '\n') {
                String done = line.toString(StandardCharsets.UTF_8);
                line.reset();
                onLine.accept(done);
                lines.add(done);
            } else {
                line.write(b);
            }
        }

        @Override
        public synchronized void write(byte[] b, int off, int len) {
            for (int i = off; i < off + len; i++) {
                write(b[i]);
            }
        }

        @Override
        public void flush() {
            original.flush();
        }
    }
}
