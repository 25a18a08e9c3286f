package io.rdmacomm.rdma.ucx;

import io.rdmacomm.rdma.spi.RdmaProvider;
import java.io.IOException;
import java.util.HashMap;
import java.util.Map;

/**
 * A provider's nodes of one process by key (side and interface), reference counted: what
 * {@link RdmaProvider#node} hands out. Static in a provider, since {@code ServiceLoader} makes new provider
 * instances. A node whose last user left is forgotten before it is destroyed, so a later call makes a new one.
 *
 * @param <N> the provider's node type
 */
public final class NodeRegistry<N> {
    /** Makes a node; called with the registry's lock held, so at most one per key exists. */
    @FunctionalInterface
    public interface Creator<N> {
        N create() throws IOException;
    }

    private static final class Entry<N> {
        final N node;
        int users;

        Entry(N node) {
            this.node = node;
        }
    }

    private final Map<String, Entry<N>> byKey = new HashMap<>();

    /** The node for {@code key}, made by {@code creator} if there is none; one more user until {@link #release}. */
    public synchronized N acquire(String key, Creator<N> creator) throws IOException {
        Entry<N> e = byKey.get(key);
        if (e == null) {
            e = new Entry<>(creator.create());
            byKey.put(key, e);
        }
        e.users++;
        return e.node;
    }

    /**
     * One user of {@code key}'s node left; true if it was the last, the node is forgotten and the caller destroys
     * it. Each {@link #acquire} is matched by one call.
     */
    public synchronized boolean release(String key) {
        Entry<N> e = byKey.get(key);
        if (e == null) {
            throw new IllegalStateException("node " + key + " released more often than acquired");
        }
        if (--e.users > 0) {
            return false;
        }
        byKey.remove(key);
        return true;
    }
}
