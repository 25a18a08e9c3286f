package io.rdmacomm.local;

import io.rdmacomm.api.Endpoint;
import java.io.IOException;
import java.net.BindException;
import java.net.SocketTimeoutException;
import java.nio.channels.AsynchronousCloseException;
import java.util.ArrayDeque;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A served {@code local://} name: the JVM-wide registry entry that clients find, holding the connections that
 * have not been accepted yet (the backlog). Connecting only enqueues; the handshake is answered by accept.
 */
final class Listener {
    private static final ConcurrentMap<String, Listener> REGISTRY = new ConcurrentHashMap<>();

    private final Endpoint endpoint;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition pending = lock.newCondition();
    private final ArrayDeque<Half> backlog = new ArrayDeque<>();
    private boolean closed;

    private Listener(Endpoint endpoint) {
        this.endpoint = endpoint;
    }

    static Listener bind(Endpoint endpoint) throws BindException {
        Listener l = new Listener(endpoint);
        if (REGISTRY.putIfAbsent(endpoint.host(), l) != null) {
            throw new BindException(endpoint + " is already served in this JVM");
        }
        return l;
    }

    /** The listener serving {@code name}, or null. */
    static Listener lookup(String name) {
        return REGISTRY.get(name);
    }

    Endpoint endpoint() {
        return endpoint;
    }

    /** Queues the server's end of a new connection; false if this listener has closed meanwhile. */
    boolean offer(Half serverEnd) {
        lock.lock();
        try {
            if (closed) {
                return false;
            }
            backlog.add(serverEnd);
            pending.signalAll();
            return true;
        } finally {
            lock.unlock();
        }
    }

    /**
     * The next queued connection, waiting until {@code deadline} ({@link System#nanoTime()} based) or, if
     * {@code timeoutNanos} is 0, until close.
     */
    Half take(long timeoutNanos, long deadline) throws IOException {
        lock.lock();
        try {
            while (backlog.isEmpty() && !closed) {
                long left = deadline - System.nanoTime();
                if (timeoutNanos != 0 && left <= 0) {
                    throw new SocketTimeoutException("accept on " + endpoint + ": no peer within "
                            + TimeUnit.NANOSECONDS.toMillis(timeoutNanos) + " ms (acceptTimeout)");
                }
                Pipe.await(pending, timeoutNanos == 0, left);
            }
            if (closed) {
                throw new AsynchronousCloseException();
            }
            return backlog.poll();
        } finally {
            lock.unlock();
        }
    }

    /** Unbinds the name and drops every connection not yet accepted. */
    void close() {
        REGISTRY.remove(endpoint.host(), this);
        lock.lock();
        try {
            closed = true;
            backlog.forEach(Half::close);
            backlog.clear();
            pending.signalAll();
        } finally {
            lock.unlock();
        }
    }
}
