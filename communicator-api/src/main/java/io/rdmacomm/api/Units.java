package io.rdmacomm.api;

import java.time.Duration;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Parsing and printing of the sizes ({@code 8}, {@code 64k}, {@code 1m}, {@code 2g}; binary multiples) and
 * durations ({@code 0}, {@code 250us}, {@code 500ms}, {@code 5s}, {@code 2m}, {@code 1h}) used by endpoint
 * options and the command-line tools.
 */
public final class Units {
    private static final Pattern SIZE = Pattern.compile("(\\d+)\\s*([kmgt]?)(i?b)?", Pattern.CASE_INSENSITIVE);
    private static final Pattern DURATION = Pattern.compile("(\\d+)\\s*(ns|us|ms|s|m|h)", Pattern.CASE_INSENSITIVE);

    private Units() {
    }

    /**
     * Parses a size in bytes: digits with an optional binary unit {@code k}, {@code m}, {@code g} or {@code t}
     * (an optional {@code b} or {@code ib} may follow).
     *
     * @throws IllegalArgumentException naming the text if it is not a size or overflows
     */
    public static long parseSize(String text) {
        Matcher m = SIZE.matcher(text.trim());
        if (!m.matches()) {
            throw new IllegalArgumentException("bad size '" + text + "': expected digits with an optional unit"
                    + " k, m, g or t (binary multiples), e.g. 64k or 1m");
        }
        int shift = switch (m.group(2).toLowerCase(Locale.ROOT)) {
            case "" -> 0;
            case "k" -> 10;
            case "m" -> 20;
            case "g" -> 30;
            default -> 40;
        };
        try {
            long value = Long.parseLong(m.group(1));
            if (value > (Long.MAX_VALUE >> shift)) {
                throw new NumberFormatException();
            }
            return value << shift;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("bad size '" + text + "': too large");
        }
    }

    /**
     * Parses a duration: {@code 0}, or digits followed by one of {@code ns us ms s m h}.
     *
     * @throws IllegalArgumentException naming the text if it is not a duration
     */
    public static Duration parseDuration(String text) {
        String t = text.trim();
        if (t.equals("0")) {
            return Duration.ZERO;
        }
        Matcher m = DURATION.matcher(t);
        if (!m.matches()) {
            throw new IllegalArgumentException("bad duration '" + text + "': expected digits with a unit"
                    + " ns, us, ms, s, m or h, e.g. 500ms or 5s (or 0)");
        }
        try {
            long v = Long.parseLong(m.group(1));
            return switch (m.group(2).toLowerCase(Locale.ROOT)) {
                case "ns" -> Duration.ofNanos(v);
                case "us" -> Duration.ofNanos(Math.multiplyExact(v, 1000L));
                case "ms" -> Duration.ofMillis(v);
                case "s" -> Duration.ofSeconds(v);
                case "m" -> Duration.ofMinutes(v);
                default -> Duration.ofHours(v);
            };
        } catch (ArithmeticException | NumberFormatException e) {
            throw new IllegalArgumentException("bad duration '" + text + "': too large");
        }
    }

    /** Prints a size with the largest binary unit that divides it ({@code 65536} → {@code 64k}). */
    public static String formatSize(long bytes) {
        String[] units = {"t", "g", "m", "k"};
        int[] shifts = {40, 30, 20, 10};
        for (int i = 0; i < units.length; i++) {
            long unit = 1L << shifts[i];
            if (bytes != 0 && bytes % unit == 0) {
                return (bytes >> shifts[i]) + units[i];
            }
        }
        return Long.toString(bytes);
    }

    /** Prints a duration with the largest unit that divides it ({@code 5000ms} → {@code 5s}). */
    public static String formatDuration(Duration d) {
        long nanos = d.toNanos();
        if (nanos == 0) {
            return "0";
        }
        long[] factors = {3_600_000_000_000L, 60_000_000_000L, 1_000_000_000L, 1_000_000L, 1_000L, 1L};
        String[] names = {"h", "m", "s", "ms", "us", "ns"};
        for (int i = 0; i < factors.length; i++) {
            if (nanos % factors[i] == 0) {
                return (nanos / factors[i]) + names[i];
            }
        }
        return nanos + "ns";
    }
}
