package io.rdmacomm.kvstore;

import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.support.RateLimitedLog;
import java.time.Duration;
import java.util.ArrayList;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.BooleanSupplier;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One thread that serves many data connections, as an event loop: a connection with bytes to read is queued here
 * (by its transport's readiness listener, {@link io.rdmacomm.api.Communicator#notifyReadable}) and gets a turn in
 * which it serves the requests that arrived without waiting for more. A server on few cores then pays neither a
 * thread per connection nor a wake-up per request: while requests keep arriving the thread goes from one
 * connection to the next, as Redis's event loop does.
 *
 * <p>The queue is bounded: each connection is in it at most once at a time (its listener is one-shot, and a turn
 * either re-arms it, queues the connection again or ends it), so it holds the server's sessions plus the stop.
 */
final class DataLoop implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(DataLoop.class);
    private static final Runnable STOP = () -> { };

    private final ArrayBlockingQueue<Runnable> ready;
    private final Thread thread;
    /** The connections served here, through which an idle loop can drive their transport's progress. */
    private final CopyOnWriteArrayList<Communicator> served = new CopyOnWriteArrayList<>();
    /** Those of {@link #served} whose transport announces arrivals without progress to drive (tcp://, local://). */
    private final CopyOnWriteArrayList<Communicator> announced = new CopyOnWriteArrayList<>();
    private final BooleanSupplier work;
    private final long spinNanos;
    private final RateLimitedLog failures = new RateLimitedLog(LOG);
    /** Connections that found nothing to read, polled by this thread before they are armed; its own. */
    private final ArrayList<DataSession> polled = new ArrayList<>();
    /** The connection through which this thread waits in its transport's selector, while it does; else null. */
    private volatile Communicator waitingOn;
    /** How long one wait in the selector lasts at most before the loop looks again. */
    private static final long WAIT_SLICE_NANOS = TimeUnit.SECONDS.toNanos(1);

    DataLoop(String name, int connections, Duration spin) {
        this.ready = new ArrayBlockingQueue<>(connections + 1);
        this.work = () -> !ready.isEmpty();
        this.spinNanos = spin.toNanos();
        this.thread = new Thread(this::run, name);
        thread.setDaemon(true);
    }

    void start() {
        thread.start();
    }

    /** Queues a connection's turn; any thread. */
    void submit(Runnable turn) {
        if (!ready.offer(turn)) {
            // each connection is queued at most once, and there are at most as many as the queue holds
            throw new IllegalStateException(thread.getName() + ": more connections queued than sessions allowed");
        }
        wakeWaiter();
    }

    /** Ends a wait of this loop in its transport's selector, for a turn queued by another thread. */
    private void wakeWaiter() {
        // the loop sets waitingOn before its wait looks at the queue; this reads it after the offer
        Communicator w = waitingOn;
        if (w != null && Thread.currentThread() != thread) {
            w.wakeBlockingPoll();
        }
    }

    /** Whether an idle loop spins before it sleeps. */
    boolean spins() {
        return spinNanos > 0;
    }

    /**
     * A connection now served here; {@code announced}: its transport announces arrivals without progress to drive
     * (tcp://, local://), so this thread may wait for them in the transport's selector.
     */
    void joined(Communicator c, boolean announced) {
        served.add(c);
        if (announced) {
            this.announced.add(c);
        }
    }

    /** A connection no longer served here. */
    void left(Communicator c) {
        served.remove(c);
        announced.remove(c);
    }

    /**
     * A connection that found nothing to read, on a transport without progress to drive (tcp://, local://): this
     * thread polls it (its available()) for up to the spin before it asks to be told, since being told costs the
     * transport's readiness thread a wake-up per arming. Called on this thread.
     */
    void poll(DataSession s) {
        polled.add(s);
    }

    private void run() {
        for (;;) {
            try {
                if (!round()) {
                    return;
                }
            } catch (RuntimeException | Error e) {
                // a sweep or an idle spin that failed (out of memory, say): the loop serves on, its connections too
                failures.warn("{}: a round of the event loop failed: {}", thread.getName(), e.toString());
            }
        }
    }

    /** One round: a connection's turn, or a sweep, or a wait for work; false once stopped. */
    private boolean round() {
        {
            Runnable turn = ready.poll();
            if (turn == null && !polled.isEmpty()) {
                turn = sweep();
            }
            if (turn == null) {
                idle();
                turn = waitInSelector();
            }
            if (turn == null) {
                try {
                    turn = ready.take();
                } catch (InterruptedException e) {
                    return false;
                }
            }
            if (turn == STOP) {
                return false;
            }
            try {
                turn.run();
            } catch (RuntimeException | Error e) {
                failures.warn("{}: a connection's turn failed: {}", thread.getName(), e.toString());
            }
            return true;
        }
    }

    /**
     * Polls the connections in {@link #polled} until the spin passes without one having anything to read: those
     * with bytes get their turn here. The others are then armed. Returns a turn queued meanwhile, or null.
     */
    private Runnable sweep() {
        long end = System.nanoTime() + spinNanos;
        for (;;) {
            boolean found = false;
            for (int i = 0; i < polled.size(); ) {
                DataSession s = polled.get(i);
                if (s.hasInput()) {
                    int last = polled.size() - 1;
                    polled.set(i, polled.get(last));
                    polled.remove(last);
                    s.turn(); // may poll it again: it is appended
                    found = true;
                } else {
                    i++;
                }
            }
            Runnable queued = ready.poll();
            if (queued != null) {
                return queued;
            }
            if (polled.isEmpty()) {
                return null;
            }
            long now = System.nanoTime();
            if (found) {
                end = now + spinNanos;
            } else if (now - end >= 0) {
                break;
            }
            Thread.onSpinWait();
        }
        for (DataSession s : polled) {
            s.arm();
        }
        polled.clear();
        return ready.poll();
    }

    /**
     * With nothing queued, drives the progress of the connections' transport for up to the spin time (where it
     * has progress to drive: rdma://), so that the next requests are taken in on this thread rather than announced
     * by another one waking it.
     */
    private void idle() {
        if (spinNanos <= 0) {
            return;
        }
        for (Communicator c : served) {
            if (c.busyPoll(spinNanos, work) || !ready.isEmpty()) {
                return;
            }
            if (c.isOpen()) {
                return; // it spun (or cannot spin): the others share its transport or cannot either
            }
        }
    }

    /**
     * With nothing queued, on a transport whose arrivals a selector announces (tcp://, whose connections this thread
     * polls rather than drives): waits in that selector itself ({@link Communicator#blockingPoll}), so that the
     * listeners of the connections armed here run on this thread and queue their turns without waking it. Returns a
     * turn, or null when there is nothing to wait in this way (rdma://, whose waits race the spin's end: see
     * {@link #idle}), another thread waits there already, or the connection it waited through went away.
     */
    private Runnable waitInSelector() {
        Communicator w = selectorWaiter();
        if (w == null) {
            return null;
        }
        waitingOn = w;
        try {
            while (ready.isEmpty() && w.isOpen()) {
                long start = System.nanoTime();
                if (!w.blockingPoll(WAIT_SLICE_NANOS, work)
                        && System.nanoTime() - start < WAIT_SLICE_NANOS / 2) {
                    return ready.poll(); // it could not wait (another thread does): park instead
                }
            }
        } finally {
            waitingOn = null;
        }
        return ready.poll();
    }

    /** A served connection whose transport can be waited on without driving its progress (tcp://), or null. */
    private Communicator selectorWaiter() {
        for (Communicator c : announced) {
            if (c.isOpen() && c.canBlockingPoll()) {
                return c;
            }
        }
        return null;
    }

    /** Stops the thread once the turns queued before have run; waits for it up to {@code timeout}. */
    void stop(Duration timeout) throws InterruptedException {
        ready.put(STOP);
        wakeWaiter();
        thread.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(timeout.toNanos())));
    }

    @Override
    public void close() {
        try {
            stop(Duration.ofSeconds(10));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
