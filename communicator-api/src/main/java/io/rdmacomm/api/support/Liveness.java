package io.rdmacomm.api.support;

import io.rdmacomm.api.Units;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * Heartbeats and silence detection for connections, on one daemon thread per process ("rdmacomm-liveness"): a
 * watched connection sends a heartbeat whenever it has sent nothing for a period the peer asked for, and is failed
 * when nothing at all arrived from its peer for its {@code liveness} (a hung process, a host gone from the network:
 * cases where the transport itself sees nothing wrong). The checks compare counters the connection keeps anyway,
 * so the I/O paths pay nothing for them, and a busy connection sends no heartbeats.
 */
public final class Liveness {
    /** The one thread of the process; tasks are cancelled with their connection, so it holds nothing for long. */
    private static final ScheduledThreadPoolExecutor TIMER = timer();

    /** What a watched connection offers the timer. All methods are called on the timer thread and must not block. */
    public interface Peer {
        /** Counts everything that arrived from the peer so far (bytes, messages): any change is a sign of life. */
        long received();

        /** Counts what this side sent so far; a change means no heartbeat is due. */
        long sent();

        /** Sends a heartbeat if that is possible without waiting (a busy writer or a full send buffer: skip it). */
        void heartbeat();

        /**
         * Whether the peer's silence may be this side's own doing, so the connection is not failed for it: e.g. the
         * application leaves bytes unread and waits on nothing, while the peer may be blocked writing to it (its
         * heartbeats cannot get through then). Default: never.
         */
        default boolean excused() {
            return false;
        }

        /** The peer was silent for the connection's liveness: fail the connection with {@code cause}. */
        void silent(SocketTimeoutException cause);

        /** The peer, for the failure's message ({@code "127.0.0.1:5000"}). */
        String peerName();
    }

    /** A watch in progress; closing it ends it. */
    public interface Watching extends AutoCloseable {
        /** Stops the heartbeats and checks; idempotent. */
        @Override
        void close();
    }

    private Liveness() {
    }

    private static ScheduledThreadPoolExecutor timer() {
        ScheduledThreadPoolExecutor t = new ScheduledThreadPoolExecutor(1, r -> {
            Thread thread = new Thread(r, "rdmacomm-liveness");
            thread.setDaemon(true);
            return thread;
        });
        t.setRemoveOnCancelPolicy(true);
        return t;
    }

    /**
     * Watches {@code peer} until the returned handle is closed or the peer is found silent.
     *
     * @param livenessNanos fail the connection after this long without a sign of life; 0: never
     * @param heartbeatNanos send a heartbeat after this long without sending anything; 0: never
     * @return closing it stops the watch (idempotent); nothing to close when both are 0
     */
    public static Watching watch(Peer peer, long livenessNanos, long heartbeatNanos) {
        if (livenessNanos < 0 || heartbeatNanos < 0) {
            throw new IllegalArgumentException("negative liveness " + livenessNanos + " or heartbeat "
                    + heartbeatNanos);
        }
        if (livenessNanos == 0 && heartbeatNanos == 0) {
            return () -> { };
        }
        Watch w = new Watch(peer, livenessNanos, heartbeatNanos);
        long tick = Math.max(TimeUnit.MILLISECONDS.toNanos(1), Math.min(
                livenessNanos == 0 ? Long.MAX_VALUE : livenessNanos / 6,
                heartbeatNanos == 0 ? Long.MAX_VALUE : heartbeatNanos / 2));
        w.task = TIMER.scheduleWithFixedDelay(w, tick, tick, TimeUnit.NANOSECONDS);
        return w;
    }

    /**
     * The heartbeat period a side with {@code livenessNanos} asks its peer for: a third of it, so that one lost or
     * late heartbeat does not fail the connection; 0 (none) when liveness is off.
     */
    public static long heartbeatPeriod(long livenessNanos) {
        return livenessNanos / 3;
    }

    /** The message of a silence failure: {@code "peer 127.0.0.1:5000 sent nothing for 30s (liveness)"}. */
    static String silenceMessage(String peerName, long livenessNanos) {
        return "peer " + peerName + " sent nothing for " + Units.formatDuration(Duration.ofNanos(livenessNanos))
                + " (liveness)";
    }

    /**
     * One watched connection; its fields are the timer thread's. A check and {@link #close} exclude each other, so
     * once close returns no heartbeat goes out on a channel its connection is closing (checks never block).
     */
    private static final class Watch implements Runnable, Watching {
        private final Peer peer;
        private final long liveness;
        private final long heartbeat;
        private volatile ScheduledFuture<?> task;
        private boolean closed;
        private long lastReceived;
        private long lastSent;
        private long heardAt;
        private long spokeAt;

        Watch(Peer peer, long liveness, long heartbeat) {
            this.peer = peer;
            this.liveness = liveness;
            this.heartbeat = heartbeat;
            long now = System.nanoTime();
            this.lastReceived = peer.received();
            this.lastSent = peer.sent();
            this.heardAt = now;
            this.spokeAt = now;
        }

        @Override
        public synchronized void run() {
            if (closed) {
                return;
            }
            try {
                check();
            } catch (RuntimeException e) {
                // the connection's own failure is reported through its calls; the timer must go on for the others
                close();
            }
        }

        private void check() {
            long now = System.nanoTime();
            long r = peer.received();
            if (r != lastReceived) {
                lastReceived = r;
                heardAt = now;
            } else if (liveness > 0 && now - heardAt >= liveness && !peer.excused()) {
                close();
                peer.silent(new SocketTimeoutException(silenceMessage(peer.peerName(), liveness)));
                return;
            }
            if (heartbeat > 0) {
                long s = peer.sent();
                if (s != lastSent) {
                    lastSent = s;
                    spokeAt = now;
                } else if (now - spokeAt >= heartbeat) {
                    peer.heartbeat();
                    lastSent = peer.sent();
                    spokeAt = now;
                }
            }
        }

        @Override
        public synchronized void close() {
            closed = true;
            ScheduledFuture<?> t = task;
            if (t != null) {
                t.cancel(false);
            }
        }
    }
}
