package io.rdmacomm.gvirtus;

import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.CommunicatorException;
import java.io.EOFException;
import java.io.IOException;
import java.nio.channels.ClosedChannelException;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One frontend connection on a backend: reads requests, runs their routines, writes the replies, until the
 * frontend closes the connection, the stream breaks or is malformed, or the backend closes. Runs on a thread of
 * its own, like a GVirtuS backend's per-connection thread.
 */
final class Session implements Runnable, GVirtuSRoutine.Context {
    private static final Logger LOG = LoggerFactory.getLogger(Session.class);

    private final long id;
    private final Communicator connection;
    private final Map<String, GVirtuSRoutine> routines;
    private final GVirtuSLimits limits;
    private final Consumer<Session> onEnd;
    private final ConcurrentMap<String, Object> attributes = new ConcurrentHashMap<>();
    private volatile boolean closing;

    Session(long id, Communicator connection, Map<String, GVirtuSRoutine> routines, GVirtuSLimits limits,
            Consumer<Session> onEnd) {
        this.id = id;
        this.connection = connection;
        this.routines = routines;
        this.limits = limits;
        this.onEnd = onEnd;
    }

    @Override
    public void run() {
        String peer = connection.peerName();
        long served = 0;
        try {
            while (true) {
                Optional<GVirtuSRequest> request = Wire.readRequest(connection, limits);
                if (request.isEmpty()) {
                    LOG.debug("GVirtuS session {} with {}: the frontend closed after {} requests", id, peer, served);
                    break;
                }
                Wire.writeResult(connection, dispatch(request.get(), peer));
                served++;
            }
        } catch (IOException e) {
            if (closing) {
                LOG.debug("GVirtuS session {} with {}: ended by the backend's close ({})", id, peer, e.toString());
            } else if (e instanceof CommunicatorException) {
                // a stream we cannot parse cannot be resynchronised: there are no frame boundaries to skip to
                LOG.error("GVirtuS session {} with {} ended after {} requests: malformed request: {}", id, peer,
                        served, e.getMessage());
            } else if (e instanceof EOFException) {
                LOG.error("GVirtuS session {} with {} ended after {} requests: truncated request: {}", id, peer,
                        served, e.getMessage());
            } else if (e instanceof ClosedChannelException) {
                LOG.warn("GVirtuS session {} with {} ended after {} requests: connection closed", id, peer, served);
            } else {
                LOG.warn("GVirtuS session {} with {} ended after {} requests: {}", id, peer, served, e.toString());
            }
        } catch (RuntimeException | Error e) {
            // logged here, where the session is known, rather than by the thread's default handler on stderr
            LOG.error("GVirtuS session {} with {} ended after {} requests by an unexpected failure", id, peer, served,
                    e);
        } finally {
            close();
            onEnd.accept(this);
        }
    }

    private GVirtuSResult dispatch(GVirtuSRequest request, String peer) throws IOException {
        String name = request.routine();
        GVirtuSRoutine routine = routines.get(name);
        if (routine == null) {
            // what a GVirtuS backend answers: -1, 0 seconds, no output; the session goes on
            byte[] raw = name.getBytes(StandardCharsets.UTF_8);
            LOG.warn("GVirtuS session {} with {}: unknown routine {} ({} input bytes); answering exit code {}", id,
                    peer, Wire.preview(raw, raw.length), request.input().length, GVirtuSResult.EXIT_UNKNOWN_ROUTINE);
            return GVirtuSResult.error(GVirtuSResult.EXIT_UNKNOWN_ROUTINE);
        }
        long start = System.nanoTime();
        GVirtuSResult result;
        try {
            result = routine.call(GVirtuSBuffer.wrap(request.input()), this);
            if (result == null) {
                LOG.error("GVirtuS session {} with {}: routine '{}' returned no result; answering exit code {}", id,
                        peer, name, GVirtuSResult.EXIT_ROUTINE_FAILED);
                result = GVirtuSResult.error(GVirtuSResult.EXIT_ROUTINE_FAILED);
            }
        } catch (InterruptedException e) {
            if (closing) {
                // close() interrupted the routine; the connection is closed, so no reply can go out
                Thread.currentThread().interrupt();
                throw new ClosedChannelException();
            }
            result = failed(peer, name, request, e);
        } catch (Exception e) {
            result = failed(peer, name, request, e);
        }
        // nanoseconds, where GVirtuS measures whole milliseconds; the field is seconds either way
        return result.withElapsedSeconds((System.nanoTime() - start) / 1e9);
    }

    private GVirtuSResult failed(String peer, String name, GVirtuSRequest request, Exception e) {
        LOG.error("GVirtuS session {} with {}: routine '{}' failed on {} input bytes; answering exit code {}", id,
                peer, name, request.input().length, GVirtuSResult.EXIT_ROUTINE_FAILED, e);
        return GVirtuSResult.error(GVirtuSResult.EXIT_ROUTINE_FAILED);
    }

    /** Ends the session from outside: closes the connection, which unblocks its reads and writes. */
    void shutdown() {
        closing = true;
        close();
    }

    private void close() {
        try {
            connection.close();
        } catch (IOException | RuntimeException e) {
            LOG.debug("GVirtuS session {}: closing the connection failed: {}", id, e.toString());
        }
    }

    @Override
    public String peerName() {
        return connection.peerName();
    }

    @Override
    public long sessionId() {
        return id;
    }

    @Override
    public ConcurrentMap<String, Object> attributes() {
        return attributes;
    }
}
