package io.rdmacomm.tcp;

import java.io.IOException;
import java.nio.channels.CancelledKeyException;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The process's readiness thread ("rdmacomm-tcp-readiness", a daemon): one selector on which connections armed by
 * {@code notifyReadable} wait for input, however many there are. A channel joins it once, on its first arming
 * ({@link #join}: the registration is queued and done by this thread, so it never races a select); each later
 * arming sets the key's interest to OP_READ and wakes the selector ({@link #arm}; wakeups coalesce); when the
 * channel turns readable this thread sets the interest back to 0 and runs the key's attachment, the connection's
 * "tell the listener". Nothing here allocates per event.
 *
 * <p>A closed channel's key is cancelled by the close, and the closer wakes the selector, which then lets go of the
 * key, so the socket's descriptor is released. Once no channel is left and none is joining, the thread closes the
 * selector and ends: no transport thread outlives the connections; the next arming starts a new one.
 */
final class Readiness {
    private static final Logger LOG = LoggerFactory.getLogger(Readiness.class);
    /** How often an idle selector checks whether a channel is left, so the thread ends soon after the last close. */
    private static final long IDLE_CHECK_MILLIS = 1000;
    /** The running instance, or null; guarded by {@code Readiness.class}. */
    private static Readiness running;

    private final Selector selector;
    /** Guarded by {@code Readiness.class} (for the decision to end); drained by the thread. */
    private final Queue<Joining> joining = new ConcurrentLinkedQueue<>();
    private final Consumer<SelectionKey> onSelected = this::selected;

    private record Joining(SocketChannel channel, Runnable onReadable) {
    }

    private Readiness() throws IOException {
        this.selector = Selector.open();
    }

    /**
     * Queues the first arming of {@code channel} (non-blocking), starting the thread if none runs: it registers the
     * channel with interest OP_READ, then runs {@code onReadable} once the channel is readable (at once if it closed
     * meanwhile). Returns the instance the channel joins, for {@link #keyOf}.
     */
    static Readiness join(SocketChannel channel, Runnable onReadable) throws IOException {
        synchronized (Readiness.class) {
            Readiness r = running;
            if (r == null) {
                r = new Readiness();
                Thread t = new Thread(r::loop, "rdmacomm-tcp-readiness");
                t.setDaemon(true);
                t.start();
                running = r;
            }
            r.joining.add(new Joining(channel, onReadable));
            r.selector.wakeup();
            return r;
        }
    }

    /**
     * Arms a channel that joined again: its listener runs once it is readable.
     *
     * @throws CancelledKeyException if the channel was closed since it joined
     */
    static void arm(SelectionKey key) {
        key.interestOps(SelectionKey.OP_READ);
        key.selector().wakeup();
    }

    /** The key of a channel that joined, or null while it is still joining. */
    SelectionKey keyOf(SocketChannel channel) {
        return channel.keyFor(selector);
    }

    /** Wakes the selector, so it lets go of the keys of channels closed since (and ends if none is left). */
    void wakeup() {
        selector.wakeup();
    }

    private void loop() {
        try {
            for (;;) {
                try {
                    for (Joining j; (j = joining.poll()) != null; ) {
                        try {
                            j.channel().register(selector, SelectionKey.OP_READ, j.onReadable());
                        } catch (ClosedChannelException | CancelledKeyException closed) {
                            tell(j.onReadable());
                        }
                    }
                    // lets go of cancelled keys when it starts; bounded, since the last key may be cancelled
                    // after the check below and only go at the start of this select, with no wakeup left to end it
                    selector.select(onSelected, IDLE_CHECK_MILLIS);
                } catch (IOException | RuntimeException e) {
                    LOG.warn("the tcp:// readiness selector failed; going on", e);
                }
                synchronized (Readiness.class) {
                    if (joining.isEmpty() && selector.keys().isEmpty()) {
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
        try {
            key.interestOps(0);
        } catch (CancelledKeyException closed) {
            // the close tells the listener too; one of the two finds it
        }
        tell((Runnable) key.attachment());
    }

    private static void tell(Runnable onReadable) {
        try {
            onReadable.run();
        } catch (RuntimeException e) {
            LOG.warn("a readiness listener failed", e);
        }
    }
}
