package io.rdmacomm.testkit.fuzz;

import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.util.Arrays;

/**
 * Runs one parse of untrusted bytes and checks how it ended. A parser may refuse its input only with its declared
 * exception type, carrying a message (what was wrong); any other throwable (an {@code IndexOutOfBounds}, a
 * {@code NegativeArraySize}, an {@code OutOfMemoryError}) is a bug and fails the check with it as the cause. The
 * bytes the calling thread allocated during the parse are measured and must stay under a cap, so a declared length
 * that the parser trusts shows up as a failure here, not as a heap exhausted by the hundredth peer.
 */
public final class ParserChecks {
    private static final com.sun.management.ThreadMXBean THREADS =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

    /** A parse to run: returns the parsed value, or throws. */
    @FunctionalInterface
    public interface Parse<T> {
        T run() throws Exception;
    }

    /** How a parse ended: a value (refusal null), or the declared exception (value null). */
    public record Outcome<T>(T value, Exception refusal) {
        public boolean accepted() {
            return refusal == null;
        }
    }

    private ParserChecks() {
    }

    /**
     * Runs {@code parse}; returns its value or its refusal.
     *
     * @param declared the exception types the parser declares for bad input
     * @param allocationCap the most bytes the parse may allocate in this thread
     * @param parse a pure function of its input: it may run twice
     * @throws AssertionError if it threw anything else, refused without a message, or allocated more
     */
    @SafeVarargs
    public static <T> Outcome<T> parse(long allocationCap, Parse<T> parse, Class<? extends Exception>... declared) {
        long before = allocated();
        Outcome<T> outcome = run(parse, declared);
        if (allocated() - before <= allocationCap) {
            return outcome;
        }
        // the first use of a class (loading, static initialisers) allocates too: a parse counts as over its cap
        // only when it is over it again
        return parseOnce(allocationCap, parse, declared);
    }

    /**
     * Runs {@code parse} once, for a parse that consumes its input (a connection): warm it up on a representative
     * input first, since the first use of a class allocates too.
     *
     * @see #parse
     */
    @SafeVarargs
    public static <T> Outcome<T> parseOnce(long allocationCap, Parse<T> parse,
            Class<? extends Exception>... declared) {
        long before = allocated();
        Outcome<T> outcome = run(parse, declared);
        long used = allocated() - before;
        if (used > allocationCap) {
            throw new AssertionError("parser allocated " + used + " bytes, more than its cap of " + allocationCap);
        }
        return outcome;
    }

    @SafeVarargs
    private static <T> Outcome<T> run(Parse<T> parse, Class<? extends Exception>... declared) {
        try {
            return new Outcome<>(parse.run(), null);
        } catch (Exception e) {
            if (Arrays.stream(declared).noneMatch(d -> d.isInstance(e))) {
                throw new AssertionError("parser threw " + e + ", not one of " + Arrays.toString(declared), e);
            }
            if (e.getMessage() == null || e.getMessage().isBlank()) {
                throw new AssertionError("parser refused its input without saying why: " + e, e);
            }
            return new Outcome<>(null, e);
        } catch (OutOfMemoryError | StackOverflowError e) {
            throw new AssertionError("parser ran out of memory or stack: " + e, e);
        }
    }

    /** The remaining bytes of {@code b}, which is left as it was. */
    public static byte[] bytes(ByteBuffer b) {
        byte[] r = new byte[b.remaining()];
        b.duplicate().get(r);
        return r;
    }

    /** Bytes allocated so far by the calling thread. */
    public static long allocated() {
        return THREADS.getThreadAllocatedBytes(Thread.currentThread().getId());
    }
}
