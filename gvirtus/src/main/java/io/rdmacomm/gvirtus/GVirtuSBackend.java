package io.rdmacomm.gvirtus;

import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.Endpoint;
import io.rdmacomm.api.support.RateLimitedLog;
import java.io.IOException;
import java.net.SocketTimeoutException;
import java.nio.channels.ClosedChannelException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.ServiceLoader;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Serves GVirtuS routines on a communicator in the server role, as GVirtuS's backend process does: each accepted
 * connection is a session on a thread of its own that reads requests, runs the named {@link GVirtuSRoutine} and
 * writes its {@link GVirtuSResult}, until the frontend closes the connection.
 *
 * <pre>{@code
 * try (GVirtuSBackend backend = GVirtuSBackend.builder()
 *         .discover()                                   // routines listed for ServiceLoader
 *         .registerAll(BuiltinRoutines.all())          // echo, sleep, fail, cudaGetDeviceCount
 *         .start(Communicators.serve("tcp://0.0.0.0:9999?wire=raw"))) {
 *     ...
 * }
 * }</pre>
 *
 * <ul>
 *   <li>An unknown routine is answered as GVirtuS answers it: exit code {@link GVirtuSResult#EXIT_UNKNOWN_ROUTINE}
 *       (-1), 0 seconds, no output; the session goes on.</li>
 *   <li>A routine that throws is answered with {@link GVirtuSResult#EXIT_ROUTINE_FAILED} and logged; the session
 *       goes on.</li>
 *   <li>A malformed request (a name without NUL within the limit, an input over the limit) or a truncated one
 *       (the peer gone mid-request) ends that session with a logged error; the backend serves on.</li>
 *   <li>At most {@link Builder#maxSessions(int)} sessions run at once; a connection beyond that is closed at once
 *       with a logged warning, so its frontend fails fast rather than waiting unseen.</li>
 * </ul>
 *
 * <p>Nothing is written before the first request and nothing is added to GVirtuS's framing, so the backend
 * serves any communicator whose byte stream is plain. {@link #close()} stops accepting, closes every session and
 * waits for their threads. Thread-safe.
 */
public final class GVirtuSBackend implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(GVirtuSBackend.class);

    private final Communicator server;
    private final Map<String, GVirtuSRoutine> routines;
    private final GVirtuSLimits limits;
    private final int maxSessions;
    private final Duration closeTimeout;
    private final Map<Session, Thread> sessions = new LinkedHashMap<>();
    private final Thread acceptor;
    private final RateLimitedLog acceptFailures = new RateLimitedLog(LOG);
    private long sessionCount;
    private boolean closed;

    private GVirtuSBackend(Communicator server, Builder b) {
        this.server = server;
        this.routines = Collections.unmodifiableMap(new LinkedHashMap<>(b.routines));
        this.limits = b.limits;
        this.maxSessions = b.maxSessions;
        this.closeTimeout = b.closeTimeout;
        this.acceptor = new Thread(this::acceptLoop, "gvirtus-backend-accept " + server.endpoint());
    }

    public static Builder builder() {
        return new Builder();
    }

    /** The endpoint served, with the port actually bound. */
    public Endpoint endpoint() {
        return server.endpoint();
    }

    /** The names of the routines served. */
    public Set<String> routines() {
        return Collections.unmodifiableSet(new TreeSet<>(routines.keySet()));
    }

    /** The sessions running now. */
    public int activeSessions() {
        synchronized (sessions) {
            return sessions.size();
        }
    }

    /**
     * Waits until the backend stops accepting: after {@link #close()}, or when its server communicator failed for
     * good (logged).
     *
     * @return whether it stopped within {@code timeout}
     */
    public boolean awaitStopped(Duration timeout) throws InterruptedException {
        acceptor.join(Math.max(1, timeout.toMillis()));
        return !acceptor.isAlive();
    }

    private void acceptLoop() {
        while (true) {
            Communicator peer;
            try {
                peer = server.accept();
            } catch (SocketTimeoutException e) {
                continue; // an acceptTimeout on the endpoint only bounds each wait
            } catch (ClosedChannelException e) {
                if (!isClosed()) {
                    LOG.error("GVirtuS backend on {}: the server communicator was closed under it; no longer "
                            + "accepting", server.endpoint());
                }
                return;
            } catch (IOException e) {
                if (isClosed()) {
                    return;
                }
                acceptFailures.warn("GVirtuS backend on {}: accept failed: {}; retrying", server.endpoint(),
                        e.toString());
                pauseAfterFailure();
                continue;
            } catch (RuntimeException e) {
                LOG.error("GVirtuS backend on {}: cannot accept (was serve() called?); no longer accepting",
                        server.endpoint(), e);
                return;
            }
            startSession(peer);
        }
    }

    private void startSession(Communicator peer) {
        synchronized (sessions) {
            if (closed) {
                closeQuietly(peer);
                return;
            }
            if (sessions.size() >= maxSessions) {
                LOG.warn("GVirtuS backend on {}: refusing {}: {} sessions running (maxSessions)", server.endpoint(),
                        peer.peerName(), sessions.size());
                closeQuietly(peer);
                return;
            }
            long id = ++sessionCount;
            Session session = new Session(id, peer, routines, limits, this::ended);
            Thread t = new Thread(session, "gvirtus-session-" + id + " " + peer.peerName());
            sessions.put(session, t);
            LOG.debug("GVirtuS backend on {}: session {} with {}", server.endpoint(), id, peer.peerName());
            t.start();
        }
    }

    private void ended(Session s) {
        synchronized (sessions) {
            sessions.remove(s);
            sessions.notifyAll();
        }
    }

    private boolean isClosed() {
        synchronized (sessions) {
            return closed;
        }
    }

    /** Waits a little before retrying a failed accept, so a persistent failure does not spin; close() wakes it. */
    private void pauseAfterFailure() {
        synchronized (sessions) {
            if (!closed) {
                try {
                    sessions.wait(100);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }
    }

    /**
     * Stops accepting, closes the server communicator and every session's connection, interrupts routines still
     * running, and waits for all threads of this backend to end: up to the builder's close timeout for
     * sessions whose routine ignores interruption, each logged if it is still running then. Idempotent.
     */
    @Override
    public void close() {
        List<Map.Entry<Session, Thread>> running;
        synchronized (sessions) {
            if (closed) {
                return;
            }
            closed = true;
            sessions.notifyAll();
            running = List.copyOf(sessions.entrySet());
        }
        closeQuietly(server);
        for (Map.Entry<Session, Thread> e : running) {
            e.getKey().shutdown();
            e.getValue().interrupt();
        }
        long deadline = System.nanoTime() + closeTimeout.toNanos();
        join(acceptor, deadline);
        for (Map.Entry<Session, Thread> e : running) {
            join(e.getValue(), deadline);
        }
        LOG.debug("GVirtuS backend on {} closed", server.endpoint());
    }

    private void join(Thread t, long deadline) {
        if (t == Thread.currentThread()) {
            return; // close() called by a routine: its own thread ends when the routine returns
        }
        try {
            t.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (t.isAlive()) {
            LOG.error("GVirtuS backend on {}: thread '{}' still running after close; a routine ignores "
                    + "interruption", server.endpoint(), t.getName());
        }
    }

    private static void closeQuietly(Communicator c) {
        try {
            c.close();
        } catch (IOException | RuntimeException e) {
            LOG.debug("closing {} failed: {}", c, e.toString());
        }
    }

    @Override
    public String toString() {
        return "GVirtuSBackend[" + server.endpoint() + ", " + routines.size() + " routines]";
    }

    /** Collects routines and options; {@link #start(Communicator)} starts the backend. */
    public static final class Builder {
        private final Map<String, GVirtuSRoutine> routines = new LinkedHashMap<>();
        private GVirtuSLimits limits = GVirtuSLimits.DEFAULT;
        private int maxSessions = 64;
        private Duration closeTimeout = Duration.ofSeconds(10);

        private Builder() {
        }

        /**
         * Adds a routine.
         *
         * @throws IllegalArgumentException if its name is empty, contains NUL, or is taken by another routine
         */
        public Builder register(GVirtuSRoutine routine) {
            String name = Objects.requireNonNull(routine.name(), () -> routine.getClass() + " has no name");
            if (name.isEmpty() || name.indexOf('\0') >= 0) {
                throw new IllegalArgumentException(routine.getClass().getName() + ": a routine name must be "
                        + "non-empty and without NUL, got \"" + name.replace("\0", "\\0") + "\"");
            }
            GVirtuSRoutine other = routines.putIfAbsent(name, routine);
            if (other != null) {
                throw new IllegalArgumentException("two routines named '" + name + "': "
                        + other.getClass().getName() + " and " + routine.getClass().getName());
            }
            return this;
        }

        /** Adds each routine, as {@link #register(GVirtuSRoutine)}. */
        public Builder registerAll(Iterable<? extends GVirtuSRoutine> all) {
            all.forEach(this::register);
            return this;
        }

        /**
         * Adds the routines listed for {@link ServiceLoader} ({@code META-INF/services/io.rdmacomm.gvirtus
         * .GVirtuSRoutine}) on this class's class loader.
         */
        public Builder discover() {
            return discover(GVirtuSRoutine.class.getClassLoader());
        }

        /** Adds the routines listed for {@link ServiceLoader} on {@code loader}. */
        public Builder discover(ClassLoader loader) {
            for (GVirtuSRoutine r : ServiceLoader.load(GVirtuSRoutine.class, loader)) {
                register(r);
            }
            return this;
        }

        /** Bounds on the requests read; default {@link GVirtuSLimits#DEFAULT}. */
        public Builder limits(GVirtuSLimits value) {
            this.limits = Objects.requireNonNull(value, "limits");
            return this;
        }

        /** The most sessions (threads) at once; default 64. */
        public Builder maxSessions(int value) {
            if (value < 1) {
                throw new IllegalArgumentException("maxSessions must be at least 1, got " + value);
            }
            this.maxSessions = value;
            return this;
        }

        /** How long {@link GVirtuSBackend#close()} waits for its threads; default 10 s. */
        public Builder closeTimeout(Duration value) {
            if (value.isNegative()) {
                throw new IllegalArgumentException("closeTimeout must not be negative, got " + value);
            }
            this.closeTimeout = value;
            return this;
        }

        /**
         * Starts serving on {@code server}, on which {@link Communicator#serve()} has been called; the backend
         * owns it from now on and closes it in {@link GVirtuSBackend#close()}.
         *
         * @throws IllegalArgumentException if a routine name could never arrive within the limits
         */
        public GVirtuSBackend start(Communicator server) {
            Objects.requireNonNull(server, "server");
            for (String name : routines.keySet()) {
                if (name.getBytes(StandardCharsets.UTF_8).length + 1 > limits.maxRoutineNameBytes()) {
                    throw new IllegalArgumentException("routine '" + name + "' is longer than maxRoutineNameBytes "
                            + limits.maxRoutineNameBytes() + " allows (counting the NUL)");
                }
            }
            GVirtuSBackend backend = new GVirtuSBackend(server, this);
            backend.acceptor.start();
            LOG.info("GVirtuS backend serving {} with {} routines", server.endpoint(), backend.routines.size());
            return backend;
        }
    }
}
