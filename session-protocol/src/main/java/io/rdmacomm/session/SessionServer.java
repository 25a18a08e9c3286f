package io.rdmacomm.session;

import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.Communicators;
import io.rdmacomm.api.Endpoint;
import io.rdmacomm.api.support.RateLimitedLog;
import io.rdmacomm.api.support.ServerThreads;
import io.rdmacomm.session.ExchangeSettings;
import io.rdmacomm.session.SessionDispatcher;
import io.rdmacomm.session.SessionStatus;
import java.io.IOException;
import java.net.SocketTimeoutException;
import java.nio.channels.ClosedChannelException;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Accepts peers on one endpoint and serves each session in its own thread (virtual where the JDK makes that safe:
 * {@link SessionThreads}), at most {@code maxSessions} at once
 * (further peers are answered {@link SessionStatus#BUSY}). {@link #stop()} may be called from any thread; it
 * ends {@link #run()}, which closes every session and waits for their threads before it returns.
 */
public final class SessionServer implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(SessionServer.class);

    private final Communicator listener;
    private final SessionDispatcher dispatcher;
    private final ScheduledThreadPoolExecutor timer;
    private final Semaphore permits;
    private final int maxSessions;
    private final Set<Communicator> sessions = ConcurrentHashMap.newKeySet();
    private final ServerThreads threads = new ServerThreads();
    private final Set<Thread> timerThreads = ConcurrentHashMap.newKeySet();
    private final AtomicInteger sessionCount = new AtomicInteger();
    private final SessionThreads sessionThreads = SessionThreads.forThisJvm();
    private final CountDownLatch stopped = new CountDownLatch(1);
    private volatile boolean stopping;
    private final RateLimitedLog acceptFailures = new RateLimitedLog(LOG);
    /**
     * Sessions that failed, at most one line a second (the others counted in the next): a flood of failing peers
     * must not turn into a flood of lines, and a thread whose line waits for a slow stderr holds no session slot.
     */
    private final RateLimitedLog sessionFailures = new RateLimitedLog(LOG);
    private final Object pause = new Object();
    private static final long ACCEPT_RETRY_MILLIS = 10;

    private SessionServer(Communicator listener, int maxSessions, Duration requestTimeout, ExchangeSettings settings) {
        this.listener = listener;
        this.maxSessions = maxSessions;
        this.permits = new Semaphore(maxSessions);
        this.timer = new ScheduledThreadPoolExecutor(1, r -> {
            Thread thread = new Thread(r, "servercomm-request-timer");
            timerThreads.add(thread);
            return thread;
        });
        // a session's request watchdog is cancelled as soon as its request came, nearly always, and its idle check
        // when it ends: they leave the queue then, rather than holding the session's connection there until their time
        timer.setRemoveOnCancelPolicy(true);
        this.dispatcher = SessionDispatcher.standard(settings, requestTimeout, timer, this::stats);
    }

    /** {@link #start(Endpoint, int, Duration, ExchangeSettings)} with {@link ExchangeSettings#defaults()}. */
    public static SessionServer start(Endpoint endpoint, int maxSessions, Duration requestTimeout) throws IOException {
        return start(endpoint, maxSessions, requestTimeout, ExchangeSettings.defaults());
    }

    /**
     * Opens the endpoint and starts listening; peers can connect once this returns.
     *
     * @throws IOException if the endpoint cannot be served (address in use, transport unavailable)
     */
    public static SessionServer start(Endpoint endpoint, int maxSessions, Duration requestTimeout, ExchangeSettings settings)
            throws IOException {
        if (maxSessions < 1) {
            throw new IllegalArgumentException("max sessions must be at least 1, got " + maxSessions);
        }
        Communicator listener = Communicators.open(endpoint);
        try {
            listener.serve();
        } catch (IOException | RuntimeException e) {
            listener.close();
            throw e;
        }
        return new SessionServer(listener, maxSessions, requestTimeout, settings);
    }

    /** The endpoint actually bound (the real port when port 0 was asked for). */
    public Endpoint endpoint() {
        return listener.endpoint();
    }

    /** Sessions being served now (accepted, not yet ended); peers refused as busy are not sessions. */
    public int liveSessions() {
        return sessions.size();
    }

    /**
     * What {@link Exchange#STATS} reports (see {@link ServerStats}): sessions now, sessions served, the limit, and
     * the memory this process holds registered.
     */
    public ServerStats stats() {
        return ServerStats.builder().put("sessions", liveSessions()).put("sessionsServed", sessionCount.get())
                .put("maxSessions", maxSessions).putRegisteredMemory().build();
    }

    /** Accepts and serves peers until {@link #stop()}; then releases everything and returns. */
    public void run() throws IOException {
        try {
            while (!stopping) {
                Communicator peer;
                try {
                    peer = listener.accept();
                } catch (SocketTimeoutException e) {
                    // an endpoint with acceptTimeout set: no peer for a while is no reason to stop serving
                    continue;
                } catch (ClosedChannelException e) {
                    if (stopping) {
                        break;
                    }
                    throw e;
                } catch (IOException e) {
                    // one peer's failure, or the process short of descriptors: the server serves on
                    acceptFailures.warn("accepting a peer on {} failed: {}; retrying", listener.endpoint(),
                            e.toString());
                    pauseAfterFailure();
                    continue;
                }
                dispatch(peer);
            }
        } finally {
            shutDown();
        }
    }

    /** Waits a little after a failed accept, so a failure that repeats does not spin; stop() ends the wait. */
    private void pauseAfterFailure() {
        synchronized (pause) {
            if (!stopping) {
                try {
                    pause.wait(ACCEPT_RETRY_MILLIS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    stopping = true;
                }
            }
        }
    }

    private void dispatch(Communicator peer) throws IOException {
        if (!permits.tryAcquire()) {
            SessionDispatcher.refuse(peer, SessionStatus.BUSY, "server is at its limit of " + maxSessions
                    + " sessions; try again later");
            return;
        }
        sessions.add(peer);
        // the server keeps ended threads for a while, so the task lets go of the peer
        Thread thread = sessionThreads.newThread(ServerThreads.releasing(() -> serve(peer)),
                "servercomm-session-" + sessionCount.incrementAndGet());
        threads.add(thread);
        thread.start();
    }

    private void serve(Communicator peer) {
        Exception failure = null;
        try {
            dispatcher.serve(peer);
        } catch (IOException | RuntimeException e) {
            failure = e;
        } finally {
            sessions.remove(peer);
            permits.release();
        }
        // the slot is free before the line says the session ended: a log read slowly holds no slot, and a client
        // that sees the line finds the slot free
        if (failure != null && !stopping) {
            sessionFailures.warn("session from {} failed: {}", peer.peerName(), failure.toString());
            LOG.debug("session failure", failure);
        }
    }

    /** The peers of the sessions being served now, for tests. */
    List<Communicator> sessionPeers() {
        return List.copyOf(sessions);
    }

    /** Session slots free now, for tests. */
    int freeSlots() {
        return permits.availablePermits();
    }

    /** Tasks waiting in the timer (request watchdogs and idle checks), for tests. */
    int timerTasks() {
        return timer.getQueue().size();
    }

    /** Ends {@link #run()}: closes the listener, which unblocks its accept. Idempotent; returns at once. */
    public void stop() {
        stopping = true;
        synchronized (pause) {
            pause.notifyAll();
        }
        closeQuietly(listener);
    }

    /**
     * Waits until {@link #run()} has released everything.
     *
     * @return whether that happened within the timeout
     */
    public boolean awaitStopped(Duration timeout) throws InterruptedException {
        return stopped.await(timeout.toNanos(), TimeUnit.NANOSECONDS);
    }

    private void shutDown() {
        stopping = true;
        try {
            closeQuietly(listener);
            for (Communicator session : List.copyOf(sessions)) {
                closeQuietly(session);
            }
            for (Thread t : threads.joinAll(System.nanoTime() + TimeUnit.SECONDS.toNanos(5))) {
                LOG.warn("session thread {} did not end within 5 s of its communicator's close", t.getName());
            }
            timer.shutdownNow();
            // a terminated executor's thread may still be finishing: join it so none outlives the server
            if (!timer.awaitTermination(5, TimeUnit.SECONDS)) {
                LOG.warn("the request timer did not stop within 5 s");
            }
            for (Thread t : timerThreads) {
                t.join(TimeUnit.SECONDS.toMillis(5));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            timer.shutdownNow();
            stopped.countDown();
        }
    }

    private static void closeQuietly(Communicator c) {
        try {
            c.close();
        } catch (IOException e) {
            LOG.warn("closing {} failed: {}", c.peerName(), e.toString());
        }
    }

    /** {@link #stop()}; when {@link #run()} was never called, releases the listener at once. */
    @Override
    public void close() {
        stop();
        timer.shutdownNow();
    }
}
