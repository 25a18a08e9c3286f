package io.rdmacomm.session;

import io.rdmacomm.api.Communicator;
import java.io.IOException;
import java.nio.channels.ClosedChannelException;
import java.time.Duration;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Serves one session per call: reads and validates the request, answers it, and runs the handler of the
 * requested exchange. A bad request is answered with its {@link SessionStatus} and a message, and only that
 * session ends. Thread-safe: many sessions may be served at once, each in its own thread.
 */
public final class SessionDispatcher {
    private static final Logger LOG = LoggerFactory.getLogger(SessionDispatcher.class);

    private final Map<Exchange, ExchangeHandler> handlers;
    private final Duration requestTimeout;
    private final Duration idleTimeout;
    private final ScheduledExecutorService timer;

    private SessionDispatcher(Map<Exchange, ExchangeHandler> handlers, Duration requestTimeout,
            Duration idleTimeout, ScheduledExecutorService timer) {
        this.handlers = new EnumMap<>(handlers);
        this.requestTimeout = requestTimeout;
        this.idleTimeout = timer == null ? Duration.ZERO : idleTimeout;
        this.timer = timer;
    }

    /**
     * A dispatcher for every exchange this version serves, with {@link ExchangeSettings#defaults()}.
     *
     * @param requestTimeout how long a client may take to send its whole request; zero waits for ever
     * @param timer runs the request timeouts; may be {@code null} when {@code requestTimeout} is zero
     */
    public static SessionDispatcher standard(Duration requestTimeout, ScheduledExecutorService timer) {
        return standard(ExchangeSettings.defaults(), requestTimeout, timer);
    }

    /**
     * A dispatcher for every exchange this version serves (see {@link Exchange}), configured by {@code settings}.
     *
     * @param timer runs the request and idle timeouts; {@code null} (allowed when {@code requestTimeout} is zero)
     *     also turns the idle timeout off
     */
    public static SessionDispatcher standard(ExchangeSettings settings, Duration requestTimeout,
            ScheduledExecutorService timer) {
        return standard(settings, requestTimeout, timer, () -> ServerStats.builder().putRegisteredMemory().build());
    }

    /**
     * {@link #standard(ExchangeSettings, Duration, ScheduledExecutorService)} whose {@link Exchange#STATS} answers
     * with what {@code stats} reports at the time (without it: the process's registered memory only).
     */
    public static SessionDispatcher standard(ExchangeSettings settings, Duration requestTimeout,
            ScheduledExecutorService timer, Supplier<ServerStats> stats) {
        Map<Exchange, ExchangeHandler> handlers = new EnumMap<>(Exchange.class);
        handlers.put(Exchange.ECHO, new EchoHandler());
        handlers.put(Exchange.SINK, new SinkHandler());
        handlers.put(Exchange.SEND, new SendHandler());
        handlers.put(Exchange.WRITE, new WriteHandler(settings.regionSize()));
        handlers.put(Exchange.READ, new ReadHandler(settings.regionSize()));
        handlers.put(Exchange.CALL, new CallHandler(settings.routines(), settings.maxCallInput(),
                settings.routineTimeout()));
        GroupHandler groups = new GroupHandler(settings.maxGroupSize(), settings.groupTimeout());
        handlers.put(Exchange.ALLTOALL, groups);
        handlers.put(Exchange.BROADCAST, groups);
        handlers.put(Exchange.STATS, new StatsHandler(stats));
        return create(handlers, requestTimeout, settings.idleTimeout(), timer);
    }

    /** A dispatcher for exactly the given handlers, without idle timeout; other exchanges are refused as unknown. */
    public static SessionDispatcher of(Map<Exchange, ExchangeHandler> handlers, Duration requestTimeout,
            ScheduledExecutorService timer) {
        return create(handlers, requestTimeout, Duration.ZERO, timer);
    }

    private static SessionDispatcher create(Map<Exchange, ExchangeHandler> handlers, Duration requestTimeout,
            Duration idleTimeout, ScheduledExecutorService timer) {
        if (!requestTimeout.isZero() && timer == null) {
            throw new IllegalArgumentException("a request timeout of " + requestTimeout + " needs a timer");
        }
        return new SessionDispatcher(handlers, requestTimeout, idleTimeout, timer);
    }

    /**
     * Serves one session on a connected peer and closes it. Returns normally when the session ended, whether the
     * request was accepted or refused; throws when the connection failed.
     */
    public void serve(Communicator peer) throws IOException {
        try (peer) {
            AtomicBoolean settled = new AtomicBoolean();
            ScheduledFuture<?> watchdog = requestTimeout.isZero() ? null
                    : timer.schedule(() -> timeOut(peer, settled), requestTimeout.toNanos(), TimeUnit.NANOSECONDS);
            SessionRequest request;
            try {
                request = readRequest(peer);
            } catch (SessionException e) {
                if (settled.compareAndSet(false, true)) {
                    refuse(peer, e.status(), e.getMessage());
                }
                return;
            } catch (ClosedChannelException e) {
                if (settled.get()) {
                    return;
                }
                throw e;
            } finally {
                if (watchdog != null) {
                    watchdog.cancel(false);
                }
            }
            if (!settled.compareAndSet(false, true)) {
                return;
            }
            LOG.info("session from {}: {}", peer.peerName(), request);
            peer.write(SessionReply.ok().encode());
            peer.sync();
            Communicator session = IdleGuard.watch(peer, idleTimeout, timer);
            try {
                handlers.get(request.exchange()).run(session, request);
            } finally {
                if (session instanceof IdleGuard guard) {
                    guard.stopWatching();
                }
            }
            LOG.info("session from {} ended", peer.peerName());
        }
    }

    private SessionRequest readRequest(Communicator peer) throws IOException {
        SessionRequest request = SessionRequest.read(peer);
        ExchangeHandler handler = handlers.get(request.exchange());
        if (handler == null) {
            throw new SessionException(SessionStatus.UNKNOWN_EXCHANGE, "exchange " + request.exchange()
                    + " is not served here; served: " + handlers.keySet());
        }
        handler.validate(request);
        return request;
    }

    private void timeOut(Communicator peer, AtomicBoolean settled) {
        if (settled.compareAndSet(false, true)) {
            try {
                refuse(peer, SessionStatus.TRUNCATED, "no complete session request within "
                        + requestTimeout.toMillis() + " ms");
            } catch (IOException e) {
                LOG.debug("could not tell {} about its request timeout", peer.peerName(), e);
            }
            closeQuietly(peer);
        }
    }

    /**
     * Answers a session with an error and closes it. Failing to deliver the answer (the client may be gone
     * already) is logged, not thrown: the session ends either way.
     */
    public static void refuse(Communicator peer, SessionStatus status, String message) throws IOException {
        LOG.warn("refused session from {}: {}: {}", peer.peerName(), status, message);
        try {
            peer.write(new SessionReply(status, message).encode());
            peer.sync();
        } catch (IOException e) {
            LOG.debug("could not deliver the refusal to {}", peer.peerName(), e);
        } finally {
            peer.close();
        }
    }

    private static void closeQuietly(Communicator peer) {
        try {
            peer.close();
        } catch (IOException e) {
            LOG.debug("closing {} failed", peer.peerName(), e);
        }
    }

    /** Whether the group {@code name} is forming in this dispatcher's group handler; for tests. */
    boolean groupForming(String name) {
        return handlers.get(Exchange.ALLTOALL) instanceof GroupHandler g && g.isForming(name);
    }
}
