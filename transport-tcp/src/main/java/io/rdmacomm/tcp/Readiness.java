package io.rdmacomm.tcp;

import java.io.IOException;
import java.nio.channels.CancelledKeyException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The process's readiness thread ("rdmacomm-tcp-readiness", a daemon) and its one selector, on which every
 * non-blocking tcp:// channel of the process waits, however many there are: a connection holds no selector and no
 * descriptor of its own besides its socket. A channel joins once, on its first wait ({@link #join}, with interest
 * 0); each wait then adds its operation to the key's interest and wakes the selector ({@link #arm}; wakeups
 * coalesce), and the waiting thread parks. When the channel turns ready this thread takes the ready operations out
 * of the interest and tells the key's attachment ({@link Ready#ready}), which unparks the waiting reader or writer
 * and tells a listener armed by {@code notifyReadable}. Nothing here allocates per event.
 *
 * <p>A closed channel's key is cancelled by the close, and the closer wakes the selector, which then lets go of the
 * key, so the socket's descriptor is released. Once no channel is left, the thread closes the selector and ends: no
 * transport thread outlives the connections; the next join starts a new one.
 *
 * <p>An application thread with nothing else to do, such as an event loop, may select in this thread's place
 * ({@link #selectInPlace}, behind {@code Communicator.blockingPoll}): this thread steps out of its select and parks,
 * the application thread selects and tells the attachments itself, so a listener armed by {@code notifyReadable}
 * runs on the thread that waits for it, and an arrival wakes one thread instead of two. One application thread at
 * a time; whoever selects holds {@link #selecting}.
 */
final class Readiness {
    private static final Logger LOG = LoggerFactory.getLogger(Readiness.class);
    /** How often an idle selector checks whether a channel is left, so the thread ends soon after the last close. */
    private static final long IDLE_CHECK_MILLIS = 1000;
    /**
     * The running instance, or null; written under {@code Readiness.class}, read without it by {@link #wakeInPlace}.
     */
    private static volatile Readiness running;

    private final Selector selector;
    private final Consumer<SelectionKey> onSelected = this::selected;
    /** Held by the thread in {@code select}: this one, or an application thread in {@link #selectInPlace}. */
    private final ReentrantLock selecting = new ReentrantLock();
    /** Whether an application thread selects in this thread's place; set under {@code Readiness.class}. */
    private final AtomicBoolean inPlace = new AtomicBoolean();
    /** Set by {@link #wakeInPlace}: the application thread in {@link #selectInPlace} returns. */
    private volatile boolean woken;
    private Thread thread;

    /** A key's attachment: told, on the readiness thread, which operations its channel is ready for. */
    interface Ready {
        /** Must not block nor throw. */
        void ready(int readyOps);
    }

    private Readiness() throws IOException {
        this.selector = Selector.open();
    }

    /**
     * Registers {@code channel} (non-blocking) with interest 0 and {@code ready} attached, starting the thread if
     * none runs; returns its key, for {@link #arm}.
     *
     * @throws java.nio.channels.ClosedChannelException if the channel was closed
     */
    static SelectionKey join(SocketChannel channel, Ready ready) throws IOException {
        synchronized (Readiness.class) {
            // registering does not wait for a select in progress; the lock keeps the thread from ending meanwhile
            return channel.register(runningOrStarted().selector, 0, ready);
        }
    }

    /** The running instance, started if none runs; called under {@code Readiness.class}. */
    private static Readiness runningOrStarted() throws IOException {
        Readiness r = running;
        if (r == null) {
            r = new Readiness();
            Thread t = new Thread(r::loop, "rdmacomm-tcp-readiness");
            t.setDaemon(true);
            r.thread = t;
            t.start();
            running = r;
        }
        return r;
    }

    /**
     * Adds {@code op} to the key's interest and wakes the selector so it takes the change: the key's attachment is
     * told once the channel is ready for it.
     *
     * @throws CancelledKeyException if the channel was closed
     */
    static void arm(SelectionKey key, int op) {
        key.interestOpsOr(op);
        key.selector().wakeup();
    }

    /**
     * Selects on the calling thread in the readiness thread's place, telling the attachments of ready keys itself,
     * until {@code until} holds, {@code nanos} pass or {@link #wakeInPlace} is called; meanwhile the readiness thread
     * parks.
     *
     * @return whether {@code until} held; false at once if another thread selects in place already, or the selector
     *     cannot be opened
     */
    static boolean selectInPlace(long nanos, BooleanSupplier until) {
        Readiness r;
        synchronized (Readiness.class) {
            try {
                r = runningOrStarted();
            } catch (IOException e) {
                LOG.warn("the tcp:// readiness selector cannot be opened: {}", e.toString());
                return false;
            }
            if (!r.inPlace.compareAndSet(false, true)) {
                return false;
            }
        }
        r.woken = false; // a wake meant for an earlier wait; the caller's condition says what it waits for
        try {
            r.selector.wakeup(); // the readiness thread leaves its select, sees inPlace and parks
            r.selecting.lock();
            try {
                long deadline = System.nanoTime() + nanos;
                for (;;) {
                    if (until.getAsBoolean()) {
                        return true;
                    }
                    if (r.woken) {
                        r.woken = false;
                        return until.getAsBoolean();
                    }
                    long left = deadline - System.nanoTime();
                    if (left <= 0) {
                        return false;
                    }
                    try {
                        r.selector.select(r.onSelected, TcpServer.millisUntil(left));
                    } catch (IOException | RuntimeException e) {
                        LOG.warn("the tcp:// readiness selector failed under an application thread", e);
                        return until.getAsBoolean();
                    }
                }
            } finally {
                r.selecting.unlock();
            }
        } finally {
            r.inPlace.set(false);
            LockSupport.unpark(r.thread);
        }
    }

    /**
     * Ends a {@link #selectInPlace} early (its condition is looked at again); nothing if no thread selects in place.
     */
    static void wakeInPlace() {
        Readiness r = running;
        if (r != null && r.inPlace.get()) {
            r.woken = true;
            r.selector.wakeup();
        }
    }

    private void loop() {
        try {
            for (;;) {
                if (inPlace.get()) {
                    // an application thread selects: wait until it gives the selector back (it unparks this one)
                    LockSupport.parkNanos(this, TimeUnit.MILLISECONDS.toNanos(IDLE_CHECK_MILLIS));
                } else {
                    selecting.lock();
                    try {
                        if (!inPlace.get()) {
                            // lets go of cancelled keys when it starts; bounded, since the last key may be cancelled
                            // after the check below and only go at the start of this select, with no wakeup left to
                            // end it
                            selector.select(onSelected, IDLE_CHECK_MILLIS);
                        }
                    } catch (IOException | RuntimeException e) {
                        LOG.warn("the tcp:// readiness selector failed; going on", e);
                    } finally {
                        selecting.unlock();
                    }
                }
                synchronized (Readiness.class) {
                    if (selector.keys().isEmpty() && !inPlace.get()) {
                        running = null;
                        return;
                    }
                }
            }
        } finally {
            TcpServer.closeQuietly(selector);
        }
    }

    private void selected(SelectionKey key) {
        int ops;
        try {
            ops = key.readyOps();
            key.interestOpsAnd(~ops);
        } catch (CancelledKeyException closed) {
            ops = SelectionKey.OP_READ | SelectionKey.OP_WRITE; // the close wakes its waiters too
        }
        try {
            ((Ready) key.attachment()).ready(ops);
        } catch (RuntimeException e) {
            LOG.warn("a readiness listener failed", e);
        }
    }
}
