package io.rdmacomm.tcp;

import java.io.IOException;
import java.nio.channels.CancelledKeyException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
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
 */
final class Readiness {
    private static final Logger LOG = LoggerFactory.getLogger(Readiness.class);
    /** How often an idle selector checks whether a channel is left, so the thread ends soon after the last close. */
    private static final long IDLE_CHECK_MILLIS = 1000;
    /** The running instance, or null; guarded by {@code Readiness.class}. */
    private static Readiness running;

    private final Selector selector;
    private final Consumer<SelectionKey> onSelected = this::selected;

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
            Readiness r = running;
            if (r == null) {
                r = new Readiness();
                Thread t = new Thread(r::loop, "rdmacomm-tcp-readiness");
                t.setDaemon(true);
                t.start();
                running = r;
            }
            // registering does not wait for a select in progress; the lock keeps the thread from ending meanwhile
            return channel.register(r.selector, 0, ready);
        }
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

    private void loop() {
        try {
            for (;;) {
                try {
                    // lets go of cancelled keys when it starts; bounded, since the last key may be cancelled
                    // after the check below and only go at the start of this select, with no wakeup left to end it
                    selector.select(onSelected, IDLE_CHECK_MILLIS);
                } catch (IOException | RuntimeException e) {
                    LOG.warn("the tcp:// readiness selector failed; going on", e);
                }
                synchronized (Readiness.class) {
                    if (selector.keys().isEmpty()) {
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
