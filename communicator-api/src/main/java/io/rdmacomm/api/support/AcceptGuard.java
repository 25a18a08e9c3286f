package io.rdmacomm.api.support;

import io.rdmacomm.api.Units;
import java.io.IOException;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.FileChannel;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;

/**
 * Accepting on a non-blocking listener so that the accepting thread never dies of it. A failed accept (EMFILE and
 * ENFILE when descriptors run out, ENOBUFS and ENOMEM when the kernel is short, anything else) is logged at most once
 * a second, and the caller backs off: {@link #backoffNanos()} says how long to leave the listener alone, from 5 ms
 * doubling to 1 s while failures go on, back to none at the first success.
 *
 * <p>The guard holds one spare descriptor (on {@code /dev/null}) for the case where descriptors ran out: it lets go
 * of it, takes the waiting peer off the listen queue, refuses it ({@link Refuser}, a short message in the transport's
 * own wire where it has one) and closes it, then takes the spare again. So a peer that arrives while the server is
 * out of descriptors hears at once that it was refused, instead of waiting in the kernel's queue until its connect
 * times out, and the queue cannot fill with peers the server cannot take. A server that holds peers it can spare
 * (connections that never sent a byte) gives a {@code makeRoom} hook: when descriptors run out the guard first asks
 * it to drop one of those and, if it did, accepts again at once, so the waiting peer is taken rather than refused.
 *
 * <p>Used by one thread at a time (the listener's accepting thread).
 */
public final class AcceptGuard implements AutoCloseable {
    static final long BACKOFF_MIN_NANOS = TimeUnit.MILLISECONDS.toNanos(5);
    static final long BACKOFF_MAX_NANOS = TimeUnit.SECONDS.toNanos(1);
    private static final Path SPARE = Path.of("/dev/null");

    /** Tells a peer the server takes at once, without waiting, why it is refused; then the guard closes it. */
    @FunctionalInterface
    public interface Refuser {
        /** Best effort: must not block (the channel is non-blocking) and may throw, which is ignored. */
        void refuse(SocketChannel peer, String reason) throws IOException;
    }

    private final String where;
    private final RateLimitedLog log;
    private final Refuser refuser;
    private final BooleanSupplier makeRoom;
    private FileChannel spare;
    private long backoff;
    private long backoffUntil;
    private long failures;
    private long shed;

    /**
     * @param where the listener, for log lines ({@code "tcp://127.0.0.1:5000"})
     * @param log where the (rate-limited) lines go
     * @param refuser what a peer refused for want of descriptors is told; null: it is only closed
     */
    public AcceptGuard(String where, Logger log, Refuser refuser) {
        this(where, log, refuser, null);
    }

    /**
     * @param where the listener, for log lines ({@code "tcp://127.0.0.1:5000"})
     * @param log where the (rate-limited) lines go
     * @param refuser what a peer refused for want of descriptors is told; null: it is only closed
     * @param makeRoom asked, when descriptors ran out, to free one by dropping a peer the server can spare; true if it
     *        freed one (the descriptor must be closed by then), and the accept is tried again at once; null: none
     */
    public AcceptGuard(String where, Logger log, Refuser refuser, BooleanSupplier makeRoom) {
        this.where = where;
        this.log = new RateLimitedLog(log);
        this.refuser = refuser;
        this.makeRoom = makeRoom;
        this.spare = openSpare();
    }

    /**
     * The next peer waiting on {@code listener} (non-blocking), or null: none is waiting, or accepting failed and
     * the caller should leave the listener alone for {@link #backoffNanos()}.
     *
     * @throws ClosedChannelException if the listener was closed
     */
    public SocketChannel accept(ServerSocketChannel listener) throws ClosedChannelException {
        if (backoffNanos() > 0) {
            return null;
        }
        try {
            SocketChannel c = listener.accept();
            if (c != null) {
                backoff = 0;
            }
            return c;
        } catch (ClosedChannelException e) {
            throw e;
        } catch (IOException | RuntimeException e) {
            Exception failure = e;
            if (makeRoom != null && outOfDescriptors(e) && madeRoom()) {
                try {
                    SocketChannel c = listener.accept();
                    if (c != null) {
                        failures++;
                        backoff = 0;
                        log.warn("{}: accepting a peer failed: {}; dropped a peer the server could spare to take it"
                                + " ({} failures so far)", where, e.toString(), failures);
                    }
                    return c;
                } catch (ClosedChannelException closed) {
                    throw closed;
                } catch (IOException | RuntimeException again) {
                    failure = again;
                }
            }
            failed(listener, failure);
            return null;
        }
    }

    private boolean madeRoom() {
        try {
            return makeRoom.getAsBoolean();
        } catch (RuntimeException e) {
            return false;
        }
    }

    private void failed(ServerSocketChannel listener, Exception e) {
        failures++;
        backoff = backoff == 0 ? BACKOFF_MIN_NANOS : Math.min(BACKOFF_MAX_NANOS, backoff * 2);
        backoffUntil = System.nanoTime() + backoff;
        boolean refused = outOfDescriptors(e) && shedOne(listener);
        log.warn("{}: accepting a peer failed: {}; {}retrying in {} ({} failures so far)", where, e.toString(),
                refused ? "refused the next waiting peer with the spare descriptor, " : "",
                Units.formatDuration(Duration.ofNanos(backoff)), failures);
    }

    /** Whether the failure is the process or the system running out of descriptors (EMFILE, ENFILE). */
    static boolean outOfDescriptors(Exception e) {
        String m = String.valueOf(e.getMessage());
        return m.contains("Too many open files");
    }

    /** Refuses one waiting peer with the spare descriptor; true if one was refused. */
    private boolean shedOne(ServerSocketChannel listener) {
        if (spare == null) {
            spare = openSpare();
            return false;
        }
        closeQuietly(spare);
        spare = null;
        try {
            SocketChannel c = listener.accept();
            if (c == null) {
                return false;
            }
            try {
                c.configureBlocking(false);
                if (refuser != null) {
                    refuser.refuse(c, "the server is out of file descriptors; try again later");
                }
            } catch (IOException | RuntimeException ignored) {
                // the close below is the refusal then
            } finally {
                closeQuietly(c);
            }
            shed++;
            return true;
        } catch (IOException | RuntimeException again) {
            return false;
        } finally {
            spare = openSpare();
        }
    }

    /** How long the caller should leave the listener alone before the next {@link #accept}; 0: not at all. */
    public long backoffNanos() {
        if (backoffUntil == 0) {
            return 0;
        }
        long left = backoffUntil - System.nanoTime();
        if (left <= 0) {
            backoffUntil = 0;
            return 0;
        }
        return left;
    }

    /** {@link #backoffNanos()} in whole milliseconds rounded up, for a select timeout; 0: no back-off. */
    public long backoffMillis() {
        long n = backoffNanos();
        return n == 0 ? 0 : Math.max(1, TimeUnit.NANOSECONDS.toMillis(n + 999_999));
    }

    /** The back-off the last failure set, whether or not it has passed (tests); 0 after a success. */
    long backoffStepNanos() {
        return backoff;
    }

    /** Failed accepts so far. */
    public long failures() {
        return failures;
    }

    /** Peers refused with the spare descriptor so far. */
    public long refused() {
        return shed;
    }

    /** Whether the guard holds its spare descriptor now. */
    public boolean holdsSpare() {
        return spare != null;
    }

    /** Gives back the spare descriptor. */
    @Override
    public void close() {
        if (spare != null) {
            closeQuietly(spare);
            spare = null;
        }
    }

    private static FileChannel openSpare() {
        try {
            return FileChannel.open(SPARE, StandardOpenOption.READ);
        } catch (IOException | RuntimeException e) {
            return null; // no descriptor to spare now; the next failure tries again
        }
    }

    private static void closeQuietly(AutoCloseable c) {
        try {
            c.close();
        } catch (Exception ignored) {
            // nothing to do
        }
    }
}
