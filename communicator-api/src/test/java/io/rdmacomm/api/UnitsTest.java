package io.rdmacomm.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

@Timeout(10)
class UnitsTest {

    @ParameterizedTest
    @CsvSource({"8,8", "64k,65536", "64K,65536", "1m,1048576", "1MiB,1048576", "2g,2147483648", "1kb,1024"})
    void sizes(String text, long bytes) {
        assertEquals(bytes, Units.parseSize(text));
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "k", "-1", "1.5m", "1x", "99999999999999999999", "9000000000000t"})
    void badSizes(String text) {
        assertThrows(IllegalArgumentException.class, () -> Units.parseSize(text));
    }

    @Test
    void durations() {
        assertEquals(Duration.ZERO, Units.parseDuration("0"));
        assertEquals(Duration.ofNanos(250_000), Units.parseDuration("250us"));
        assertEquals(Duration.ofMillis(500), Units.parseDuration("500ms"));
        assertEquals(Duration.ofSeconds(5), Units.parseDuration("5s"));
        assertEquals(Duration.ofMinutes(2), Units.parseDuration("2m"));
        assertEquals(Duration.ofHours(1), Units.parseDuration("1h"));
    }

    @ParameterizedTest
    @ValueSource(strings = {"5", "s", "1.5s", "5 sec", "-1s"})
    void badDurations(String text) {
        assertThrows(IllegalArgumentException.class, () -> Units.parseDuration(text));
    }

    @Test
    void formatsRoundTrip() {
        for (long v : new long[] {1, 1000, 1024, 65536, 1 << 20, 3L << 30, 12345}) {
            assertEquals(v, Units.parseSize(Units.formatSize(v)));
        }
        for (Duration d : new Duration[] {Duration.ZERO, Duration.ofMillis(1500), Duration.ofSeconds(5),
            Duration.ofNanos(7), Duration.ofMinutes(90)}) {
            assertEquals(d, Units.parseDuration(Units.formatDuration(d)));
        }
        assertEquals("64k", Units.formatSize(65536));
        assertEquals("1500ms", Units.formatDuration(Duration.ofMillis(1500)));
    }
}
