package io.rdmacomm.api.support;

import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;

/**
 * A log line that repeats under load (a rejected peer, a failed accept) written at most once per interval: the
 * lines in between are counted, and the next line that goes out says how many were left out. A server whose stderr
 * is read slowly then spends its accept thread on accepting, not on writing 20 000 lines about a flood.
 *
 * <p>Thread-safe; the check is one volatile read and, once per interval, a short lock.
 */
public final class RateLimitedLog {
    /** The interval servers use unless told otherwise. */
    public static final long DEFAULT_INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(1);

    private final Logger log;
    private final long intervalNanos;
    private long nextAt;
    private long suppressed;

    /**
     * @param log where lines go
     * @param intervalNanos at most one line per this long; must be positive
     */
    public RateLimitedLog(Logger log, long intervalNanos) {
        if (intervalNanos <= 0) {
            throw new IllegalArgumentException("interval must be positive, got " + intervalNanos + " ns");
        }
        this.log = log;
        this.intervalNanos = intervalNanos;
        this.nextAt = System.nanoTime();
    }

    /** One line per {@link #DEFAULT_INTERVAL_NANOS}. */
    public RateLimitedLog(Logger log) {
        this(log, DEFAULT_INTERVAL_NANOS);
    }

    /** A WARN line, unless one went out less than an interval ago (then it is only counted). */
    public void warn(String format, Object... args) {
        long left = admit();
        if (left < 0) {
            return;
        }
        log.warn(left == 0 ? format : format + " (" + left + " similar lines left out)", args);
    }

    /**
     * Whether a line may go out now: -1 if not (it was counted), else how many were left out since the last one.
     */
    synchronized long admit() {
        long now = System.nanoTime();
        if (now - nextAt < 0) {
            suppressed++;
            return -1;
        }
        nextAt = now + intervalNanos;
        long left = suppressed;
        suppressed = 0;
        return left;
    }

    /** Lines counted but not written since the last one that went out. */
    public synchronized long suppressed() {
        return suppressed;
    }
}
