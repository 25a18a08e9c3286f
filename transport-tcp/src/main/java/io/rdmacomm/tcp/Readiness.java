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
 * The process's readiness thread ("rdmacomm-tcp-readiness", a daemon started on first use): one selector on which
 * connections armed by {@code notifyReadable} wait for input, however many there are. A channel joins it once, on
 * its first arming (the registration is queued and done by this thread, so it never races a select); each arming
 * then sets the key's interest to OP_READ and wakes the selector (wakeups coalesce), and when the channel turns
 * readable this thread sets the interest back to 0 and runs the key's attachment, the connection's
 * "tell the listener". Nothing here allocates per event. A closed channel's key is cancelled by the close; the
 * closer wakes the selector ({@link #wakeup}) so it lets go of the key and the socket's descriptor is released.
 */
final class Readiness {
    private static final Logger LOG = LoggerFactory.getLogger(Readiness.class);
    private static volatile Readiness instance;

    private final Selector selector;
    private final Queue<Joining> joining = new ConcurrentLinkedQueue<>();
    private final Consumer<SelectionKey> onSelected = this::selected;

    private record Joining(SocketChannel channel, Runnable onReadable) {
    }

    private Readiness() throws IOException {
        this.selector = Selector.open();
        Thread t = new Thread(this::loop, "rdmacomm-tcp-readiness");
        t.setDaemon(true);
        t.start();
    }

    /** The process's instance, started on first use. */
    static Readiness get() throws IOException {
        Readiness r = instance;
        if (r == null) {
            synchronized (Readiness.class) {
                r = instance;
                if (r == null) {
                    r = new Readiness();
                    instance = r;
                }
            }
        }
        return r;
    }

    /** Wakes the selector if it was ever started, so it lets go of the keys of channels closed since. */
    static void wakeupIfStarted() {
        Readiness r = instance;
        if (r != null) {
            r.selector.wakeup();
        }
    }

    /**
     * Arms {@code channel} (non-blocking): {@code onReadable} runs on this thread once the channel is readable (or
     * at once on it if the channel is closed before it joined). {@code key} is the channel's key here from an
     * earlier arming, or null for the first, which queues the registration with interest OP_READ.
     *
     * @throws CancelledKeyException if the channel was closed since it joined
     */
    void arm(SocketChannel channel, SelectionKey key, Runnable onReadable) {
        if (key == null) {
            joining.add(new Joining(channel, onReadable));
        } else {
            key.interestOps(SelectionKey.OP_READ);
        }
        selector.wakeup();
    }

    /** The key of a channel that joined, or null if it did not (yet). */
    SelectionKey keyOf(SocketChannel channel) {
        return channel.keyFor(selector);
    }

    private void loop() {
        for (;;) {
            try {
                for (Joining j; (j = joining.poll()) != null; ) {
                    try {
                        j.channel().register(selector, SelectionKey.OP_READ, j.onReadable());
                    } catch (ClosedChannelException | CancelledKeyException closed) {
                        tell(j.onReadable());
                    }
                }
                selector.select(onSelected);
            } catch (IOException | RuntimeException e) {
                LOG.warn("the tcp:// readiness selector failed; going on", e);
            }
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
