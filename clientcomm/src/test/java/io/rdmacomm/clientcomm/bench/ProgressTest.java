package io.rdmacomm.clientcomm.bench;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 30, unit = TimeUnit.SECONDS)
class ProgressTest {

    @Test
    void printsTheCountUntilClosedAndLeavesNoThread() {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (Progress p = Progress.start("latency", 1000, "round trips",
                new PrintStream(out, true, StandardCharsets.UTF_8))) {
            p.update(250);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (!out.toString(StandardCharsets.UTF_8).contains("latency: 250/1000 round trips (25%)")
                    && System.nanoTime() < deadline) {
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10));
            }
        }
        assertTrue(out.toString(StandardCharsets.UTF_8).contains("latency: 250/1000 round trips (25%)"),
                out::toString);
        assertFalse(Thread.getAllStackTraces().keySet().stream()
                .anyMatch(t -> t.getName().equals("rdmacomm-bench-progress") && t.isAlive()));
    }

    @Test
    void silentProgressStartsNoThread() {
        try (Progress p = Progress.silent()) {
            p.update(5);
            assertFalse(Thread.getAllStackTraces().keySet().stream()
                    .anyMatch(t -> t.getName().equals("rdmacomm-bench-progress")));
        }
    }
}
