package io.rdmacomm.rdma.ucx;

import java.nio.ByteBuffer;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * One endpoint per peer node address, shared by all of a node's channels to that peer (their messages carry the
 * receiver's channel id, so one endpoint serves them all). UCX needs this: it pairs the endpoints two workers create
 * to each other by creation order (connection sequence numbers), not by connection, so with an endpoint per channel
 * a channel closing its endpoint tore down the peer endpoint of another connection (UCX_TLS=tcp: 64 peers of one
 * client process stalled, and a send crashed in ucp_am_send_nbx). The last channel to leave closes the endpoint;
 * an endpoint that {@linkplain Shared#failed() failed} is no longer handed out, so a later connection to the same
 * address gets a fresh one.
 *
 * @param <E> the provider's endpoint type
 * @param <C> the provider's channel type
 */
public final class SharedEndpoints<E, C> {
    /** Creates the endpoint for {@code shared} from a peer's address; {@code shared.users()} report its errors. */
    @FunctionalInterface
    public interface Factory<E, C> {
        E create(byte[] address, Shared<E, C> shared);
    }

    /** An endpoint and the channels on it. */
    public static final class Shared<E, C> {
        private final Set<C> users = ConcurrentHashMap.newKeySet();
        private final byte[] address;
        private volatile E endpoint;
        private volatile boolean failed;

        private Shared(byte[] address) {
            this.address = address;
        }

        public E endpoint() {
            return endpoint;
        }

        /**
         * The endpoint failed: later {@link SharedEndpoints#acquire}s to its address create a new one. Takes no
         * lock, so an error callback may call it while the provider's worker lock is held.
         */
        public void failed() {
            failed = true;
        }

        /** A snapshot of the channels on the endpoint, e.g. to fail them all when it fails. */
        public List<C> users() {
            return List.copyOf(users);
        }
    }

    private final Factory<E, C> factory;
    private final Map<ByteBuffer, Shared<E, C>> byAddress = new HashMap<>();

    public SharedEndpoints(Factory<E, C> factory) {
        this.factory = factory;
    }

    /**
     * The endpoint to the node at {@code address}, created on first use (a factory's exception propagates and
     * nothing is kept); {@code channel} is one more user until {@link #release}.
     */
    public synchronized Shared<E, C> acquire(byte[] address, C channel) {
        ByteBuffer key = ByteBuffer.wrap(address.clone());
        Shared<E, C> s = byAddress.get(key);
        if (s == null || s.failed) {
            Shared<E, C> created = new Shared<>(key.array());
            created.endpoint = factory.create(address.clone(), created);
            byAddress.put(key, created);
            s = created;
        }
        s.users.add(channel);
        return s;
    }

    /** The peer nodes this node holds endpoints to (one per peer process and interface). */
    public synchronized int peers() {
        return byAddress.size();
    }

    /** Whether a usable endpoint to the node at {@code address} exists, which a new channel to it would share. */
    public synchronized boolean has(byte[] address) {
        Shared<E, C> s = byAddress.get(ByteBuffer.wrap(address));
        return s != null && !s.failed;
    }

    /** {@code channel} leaves {@code s}; true if it was the last user, and the caller closes the endpoint. */
    public synchronized boolean release(Shared<E, C> s, C channel) {
        if (!s.users.remove(channel) || !s.users.isEmpty()) {
            return false;
        }
        byAddress.remove(ByteBuffer.wrap(s.address), s);
        return true;
    }
}
