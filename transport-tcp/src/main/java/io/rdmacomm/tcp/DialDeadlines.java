package io.rdmacomm.tcp;

import io.rdmacomm.api.support.FieldHandles;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.channels.Channel;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * Bounds the blocking connect and handshake reads of plain tcp:// dials: one daemon thread closes the socket of a dial
 * whose {@code connectTimeout} passed, which ends its blocking call. A dial then waits in the kernel on its blocking
 * channel alone, where a timed wait (the JDK's, through the socket's adaptor) switches the socket to non-blocking and
 * back and polls it: four {@code fcntl} calls and a {@code poll} per wait, twice per connection. The thread sleeps
 * until the earliest deadline (at most {@link #SCAN_NANOS}), a dial with an earlier one (or one that comes while it
 * scans) wakes it, and it ends once no dial was watched for {@link #LINGER_NANOS} (within two scans of the last
 * dial); the next dial starts another.
 */
final class DialDeadlines {
    /** The longest the thread sleeps between scans while dials are watched. */
    static final long SCAN_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
    /**
     * How long the thread waits for another dial before it ends: long enough that a process dialing one connection
     * after another keeps one thread, short enough that it does not outlive the process's last dial by much (a
     * thread's start costs far less than a gap this long between dials).
     */
    static final long LINGER_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
    private static final Object PRESENT = Boolean.TRUE;
    private static final Object LOCK = new Object();
    private static final ConcurrentHashMap<Watch, Object> WATCHED = new ConcurrentHashMap<>();
    /** The thread, or null while none runs; guarded by {@link #LOCK}. */
    private static Thread thread;
    /** When the thread wakes next on its own. */
    private static volatile long wakeAt;

    private DialDeadlines() {
    }

    /**
     * One dial's deadline. The dial ends it with {@link #settle()} once its last blocking call returned; exactly one
     * of the two happens: the dial settles it, or the deadline closes the channel.
     */
    static final class Watch implements AutoCloseable {
        private static final VarHandle STATE = FieldHandles.of(MethodHandles.lookup(), "state", int.class);
        private static final int WATCHING = 0;
        private static final int SETTLED = 1;
        private static final int EXPIRED = 2;
        private final long deadline;
        private final Channel channel;
        private volatile int state;

        private Watch(long deadline, Channel channel) {
            this.deadline = deadline;
            this.channel = channel;
        }

        /** Whether the deadline passed and the channel was closed for it. */
        boolean expired() {
            return state == EXPIRED;
        }

        /**
         * Ends the watch: true if the dial is in time; false if the deadline came first (the channel was closed for
         * it, or is being closed).
         */
        boolean settle() {
            boolean inTime = STATE.compareAndSet(this, WATCHING, SETTLED);
            WATCHED.remove(this);
            return inTime;
        }

        /** {@link #settle()}, for a dial that failed anyway. */
        @Override
        public void close() {
            settle();
        }

        private void expire() {
            if (STATE.compareAndSet(this, WATCHING, EXPIRED)) {
                TcpServer.closeQuietly(channel);
            }
            WATCHED.remove(this);
        }
    }

    /** Closes {@code channel} once {@code deadline} ({@link System#nanoTime()}) has passed, unless settled before. */
    static Watch watch(long deadline, Channel channel) {
        Watch w = new Watch(deadline, channel);
        Thread t;
        synchronized (LOCK) {
            WATCHED.put(w, PRESENT);
            t = thread;
            if (t == null) {
                wakeAt = deadline;
                // no inherited thread locals or class loader of whichever dial happens to start it
                t = new Thread(null, DialDeadlines::run, "rdmacomm-tcp-dial-deadlines", 0, false);
                t.setDaemon(true);
                t.setContextClassLoader(null);
                try {
                    t.start();
                } catch (RuntimeException | Error e) {
                    WATCHED.remove(w); // no thread to watch it: the dial fails rather than wait unbounded
                    throw e;
                }
                thread = t;
                return w;
            }
        }
        if (deadline - wakeAt < 0) {
            LockSupport.unpark(t);
        }
        return w;
    }

    private static void run() {
        long idleSince = System.nanoTime();
        while (true) {
            try {
                Thread.interrupted(); // nothing interrupts this thread on purpose; a stray interrupt must not spin it
                long now = System.nanoTime();
                long next = now + SCAN_NANOS;
                // while scanning, every new dial wakes the thread: the scan may not see one that comes meanwhile
                wakeAt = now + Long.MAX_VALUE / 2;
                boolean any = false;
                for (Watch w : WATCHED.keySet()) {
                    if (now - w.deadline >= 0) {
                        w.expire();
                    } else {
                        any = true;
                        if (w.deadline - next < 0) {
                            next = w.deadline;
                        }
                    }
                }
                if (any) {
                    idleSince = now;
                } else if (now - idleSince >= LINGER_NANOS) {
                    synchronized (LOCK) {
                        if (WATCHED.isEmpty()) {
                            thread = null;
                            return;
                        }
                    }
                    continue;
                }
                wakeAt = next;
                LockSupport.parkNanos(DialDeadlines.class, Math.max(TimeUnit.MILLISECONDS.toNanos(1), next - now));
            } catch (RuntimeException | Error e) {
                // nothing here may end the thread that every dial's deadline depends on
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10));
            }
        }
    }
}
