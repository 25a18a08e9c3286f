package io.rdmacomm.rdma.ucx;

import io.rdmacomm.rdma.spi.RdmaProvider;
import java.io.IOException;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A provider's nodes of one process by key (side and interface), reference counted: what
 * {@link RdmaProvider#node} hands out. Static in a provider, since {@code ServiceLoader} makes new provider
 * instances.
 *
 * <p>A node whose last user left lingers for {@link #LINGER_MILLIS} before it is destroyed, and a user that comes in
 * that time takes it up again: a process that closes its only connection and opens the next (a client reconnecting,
 * a tool opening one connection after another) would otherwise make a new UCX context, worker and progress thread
 * each time, about 20 ms. Once destroyed, a node is forgotten, so a later user makes a new one. The lingering is
 * timed on one daemon thread, so it never keeps a JVM from exiting.
 *
 * @param <N> the provider's node type
 */
public final class NodeRegistry<N> {
    private static final Logger LOG = LoggerFactory.getLogger(NodeRegistry.class);
    /** The system property that sets {@link #LINGER_MILLIS} (0: a node is destroyed when its last user leaves). */
    public static final String LINGER_PROPERTY = "io.rdmacomm.ucx.nodeLinger";
    /** How long a node without users stays, in ms: {@value #DEFAULT_LINGER_MILLIS} unless the property says. */
    public static final long LINGER_MILLIS = lingerMillis(System.getProperty(LINGER_PROPERTY));
    static final long DEFAULT_LINGER_MILLIS = 2000;

    /** Makes a node; called with the registry's lock held, so at most one per key exists. */
    @FunctionalInterface
    public interface Creator<N> {
        N create() throws IOException;
    }

    private static final class Entry<N> {
        final N node;
        int users;
        /** The destruction waiting for the node's lingering to end, while it has no users. */
        ScheduledFuture<?> expiry;
        /** Counts lingerings: an expiry acts only on the lingering it was scheduled for. */
        long lingering;

        Entry(N node) {
            this.node = node;
        }
    }

    private final Map<String, Entry<N>> byKey = new HashMap<>();
    private final Consumer<N> destroy;
    private final long lingerMillis;

    /** A registry whose nodes {@code destroy} tears down once they lingered {@link #LINGER_MILLIS} without users. */
    public NodeRegistry(Consumer<N> destroy) {
        this(destroy, LINGER_MILLIS);
    }

    /** The same, lingering {@code lingerMillis} (0: destroyed when the last user leaves). */
    public NodeRegistry(Consumer<N> destroy, long lingerMillis) {
        if (lingerMillis < 0) {
            throw new IllegalArgumentException("negative linger " + lingerMillis + " ms");
        }
        this.destroy = destroy;
        this.lingerMillis = lingerMillis;
    }

    /** The linger in ms that {@code property} asks for; the default if it is unset. */
    static long lingerMillis(String property) {
        if (property == null || property.isBlank()) {
            return DEFAULT_LINGER_MILLIS;
        }
        try {
            long ms = Long.parseLong(property.trim());
            if (ms >= 0) {
                return ms;
            }
        } catch (NumberFormatException e) {
            // said below
        }
        throw new IllegalArgumentException("bad -D" + LINGER_PROPERTY + "='" + property
                + "': expected how many milliseconds a UCX node without connections stays (0 or more)");
    }

    /**
     * The node for {@code key}, made by {@code creator} if there is none (a lingering one is taken up again); one
     * more user until {@link #release}.
     */
    public synchronized N acquire(String key, Creator<N> creator) throws IOException {
        Entry<N> e = byKey.get(key);
        if (e == null) {
            e = new Entry<>(creator.create());
            byKey.put(key, e);
        } else if (e.expiry != null) {
            e.expiry.cancel(false);
            e.expiry = null;
            e.lingering++;
        }
        e.users++;
        return e.node;
    }

    /**
     * One user of {@code key}'s node left; the last one leaves it lingering, then destroyed unless a user came back.
     * Each {@link #acquire} is matched by one call.
     */
    public void release(String key) {
        Entry<N> last;
        synchronized (this) {
            Entry<N> e = byKey.get(key);
            if (e == null || e.users == 0) {
                throw new IllegalStateException("node " + key + " released more often than acquired");
            }
            if (--e.users > 0) {
                return;
            }
            if (lingerMillis > 0) {
                long lingering = ++e.lingering;
                e.expiry = Lingering.TIMER.schedule(() -> expire(key, e, lingering), lingerMillis,
                        TimeUnit.MILLISECONDS);
                return;
            }
            byKey.remove(key);
            last = e;
        }
        destroy.accept(last.node);
    }

    /** Whether {@code key} has a node (in use or lingering): tests. */
    synchronized boolean holds(String key) {
        return byKey.containsKey(key);
    }

    /** The lingering of {@code e} ended: destroys its node unless a user took it up again meanwhile. */
    private void expire(String key, Entry<N> e, long lingering) {
        synchronized (this) {
            if (byKey.get(key) != e || e.users > 0 || e.lingering != lingering) {
                return;
            }
            e.expiry = null;
            byKey.remove(key);
        }
        try {
            destroy.accept(e.node);
        } catch (RuntimeException | Error failure) {
            // the timer thread serves every registry: it must not die of one node's teardown
            LOG.warn("destroying the idle UCX node {} failed: {}", key, failure.toString());
        }
    }

    /** The one timer thread of every registry's lingering, started on first use. */
    private static final class Lingering {
        static final ScheduledExecutorService TIMER = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "rdmacomm-ucx-node-linger");
            t.setDaemon(true);
            return t;
        });
    }
}
