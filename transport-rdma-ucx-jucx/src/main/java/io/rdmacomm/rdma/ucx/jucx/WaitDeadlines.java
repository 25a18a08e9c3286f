package io.rdmacomm.rdma.ucx.jucx;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * Ends timed waits in {@code ucp_worker_wait}, which JUCX offers only untimed ({@code UcpWorker.waitForEvents}): an
 * application thread waiting in a node's worker {@linkplain Entry#arm arms} its node's entry with its deadline, and
 * the process's "rdmacomm-rdma-ucx-deadlines" thread (a daemon, started with the first entry, ended with the last)
 * signals the worker when the deadline passes. An entry is made once per node, so a wait allocates nothing, and the
 * thread is woken only for a deadline earlier than the one it sleeps until (an event loop's waits of up to a second
 * wake it about once a second).
 */
final class WaitDeadlines {
    private static final long NONE = Long.MIN_VALUE;
    /** How soon the thread signals a wait again that its signal did not end. */
    private static final long RESIGNAL_NANOS = TimeUnit.MILLISECONDS.toNanos(1);
    /** How long the thread sleeps at most: it ends soon after the last entry goes. */
    private static final long IDLE_NANOS = TimeUnit.SECONDS.toNanos(1);
    private static final List<Entry> ENTRIES = new CopyOnWriteArrayList<>();
    private static volatile Thread thread;
    /** When the thread wakes next (nanoTime); {@link #NONE} while it looks at the entries: every arm wakes it then. */
    private static volatile long wakeAt = NONE;

    private WaitDeadlines() {
    }

    /** One node's deadline: {@code signal} ends its worker's wait. */
    static final class Entry {
        private final Runnable signal;
        private volatile long deadline = NONE;
        /** Set under the entry's lock when its node goes: the signal is never run after. */
        private boolean gone;

        private Entry(Runnable signal) {
            this.signal = signal;
        }

        /** The waiting thread sleeps until {@code deadline} (nanoTime) at most. */
        void arm(long deadline) {
            this.deadline = deadline;
            long w = wakeAt;
            if (w == NONE || deadline - w < 0) {
                LockSupport.unpark(thread);
            }
        }

        /** The wait ended. */
        void disarm() {
            deadline = NONE;
        }

        /**
         * Signals the worker while the wait is still armed with this deadline; the entry stays armed, so the thread
         * signals again {@link #RESIGNAL_NANOS} later if the wait goes on (another thread's wait in the same worker
         * may have taken the signal). Never throws.
         */
        private synchronized void signalIfDue(long due) {
            if (!gone && deadline == due) {
                try {
                    signal.run();
                } catch (RuntimeException | Error e) { // NOPMD: the thread serves every node of the process
                    deadline = NONE;
                }
            }
        }
    }

    /** An entry for a node whose worker {@code signal} wakes; {@link #remove} it before the worker goes. */
    static Entry add(Runnable signal) {
        Entry e = new Entry(signal);
        synchronized (WaitDeadlines.class) {
            ENTRIES.add(e);
            if (thread == null) {
                Thread t = new Thread(WaitDeadlines::run, "rdmacomm-rdma-ucx-deadlines");
                t.setDaemon(true);
                try {
                    t.start();
                } catch (RuntimeException | Error failed) {
                    ENTRIES.remove(e);
                    throw failed;
                }
                thread = t;
            }
        }
        return e;
    }

    /** Removes the entry; once this returns its signal is not run any more. The last one's removal ends the thread. */
    static void remove(Entry e) {
        synchronized (e) {
            e.gone = true;
        }
        ENTRIES.remove(e);
        if (ENTRIES.isEmpty()) {
            // the thread may sleep up to IDLE_NANOS: wake it to see that nothing is left and end now
            LockSupport.unpark(thread);
        }
    }

    private static void run() {
        for (;;) {
            synchronized (WaitDeadlines.class) {
                if (ENTRIES.isEmpty()) {
                    thread = null;
                    return;
                }
            }
            wakeAt = NONE;
            long now = System.nanoTime();
            long next = now + IDLE_NANOS;
            for (Entry e : ENTRIES) {
                long d = e.deadline;
                if (d == NONE) {
                    continue;
                }
                if (d - now <= 0) {
                    e.signalIfDue(d);
                    d = now + RESIGNAL_NANOS;
                }
                if (d - next < 0) {
                    next = d;
                }
            }
            wakeAt = next;
            // an arm while the entries were looked at left a permit: this park returns at once and looks again
            LockSupport.parkNanos(WaitDeadlines.class, next - now);
        }
    }
}
