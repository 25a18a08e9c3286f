package io.rdmacomm.kvstore;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/** A child process's stdout as lines, read by a thread of its own so that waiting for one has a timeout. */
final class Lines {
    private static final String END = new String("end of stream");

    private final Process process;
    private final LinkedBlockingQueue<String> lines = new LinkedBlockingQueue<>();
    private final Thread reader;

    Lines(Process process) {
        this.process = process;
        this.reader = new Thread(() -> {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(process.getInputStream(),
                    StandardCharsets.UTF_8))) {
                for (String line = in.readLine(); line != null; line = in.readLine()) {
                    lines.add(line);
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            } finally {
                lines.add(END);
            }
        }, "test-stdout-reader");
        reader.setDaemon(true);
        reader.start();
    }

    /** The next line; fails if none comes within {@code timeout} or the stream ends first. */
    String next(Duration timeout) throws InterruptedException {
        String line = lines.poll(timeout.toNanos(), TimeUnit.NANOSECONDS);
        assertTrue(line != null, "no line from the child within " + timeout);
        assertTrue(line != END, "the child's stdout ended without a line; exit "
                + (process.isAlive() ? "none yet" : process.exitValue()));
        return line;
    }

    /** The lines left once the stream has ended (the process must have exited). */
    List<String> rest(Duration timeout) throws InterruptedException {
        reader.join(timeout.toMillis());
        assertTrue(!reader.isAlive(), "the child's stdout did not end within " + timeout);
        List<String> rest = new ArrayList<>();
        lines.drainTo(rest);
        rest.remove(END);
        return rest;
    }
}
