package io.rdmacomm.session;

import io.rdmacomm.api.Access;
import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.RegionDescriptor;
import io.rdmacomm.api.support.Payloads;
import io.rdmacomm.session.routine.Routine;
import io.rdmacomm.session.routine.RoutineException;
import io.rdmacomm.session.routine.RoutineRegistry;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link Exchange#CALL}, a routine call in the GVirtuS frontend→backend style (the seed's lambda mode without its
 * code shipping: the server only runs routines of its own {@link RoutineRegistry}). After the request the client
 * sends {@code short descriptor length | descriptor} of a region it registered for {@link Access#REMOTE_WRITE},
 * then the input. The server runs the routine, puts the output at offset 0 of that region, and answers with a
 * result whose body is {@code int exit code | int output length}: exit code 0 is success, 1 a routine that
 * refused its input, 2 a routine that failed or overran its time limit; for 1 and 2 the result's message says why
 * and there is no output.
 *
 * <p>Hostile clients are bounded: a declared input above {@code maxCallInput} is refused before the session is
 * accepted, the input is held only as far as it has arrived (a client that declares 16 MiB and stalls costs what it
 * sent, not 16 MiB), and the routine runs on its own thread, interrupted after {@code routineTimeout}.
 */
final class CallHandler implements ExchangeHandler {
    static final int EXIT_OK = 0;
    static final int EXIT_REFUSED = 1;
    static final int EXIT_FAILED = 2;
    private static final Logger LOG = LoggerFactory.getLogger(CallHandler.class);

    private static final AtomicInteger THREADS = new AtomicInteger();

    private final RoutineRegistry routines;
    private final int maxInput;
    private final Duration timeout;

    CallHandler(RoutineRegistry routines, int maxInput, Duration timeout) {
        this.routines = routines;
        this.maxInput = maxInput;
        this.timeout = timeout;
    }

    @Override
    public void validate(SessionRequest request) throws SessionException {
        if (routines.find(request.routine()).isEmpty()) {
            throw new SessionException(SessionStatus.UNKNOWN_ROUTINE, "unknown routine '" + request.routine()
                    + "'; this server has: " + routines.routines().stream().map(Routine::name)
                    .collect(Collectors.joining(", ")));
        }
        if (Integer.toUnsignedLong(request.inputLength()) > maxInput) {
            throw new SessionException(SessionStatus.REQUEST_TOO_LARGE, "CALL input of "
                    + Integer.toUnsignedLong(request.inputLength()) + " bytes exceeds this server's limit of "
                    + maxInput + " bytes (maxCallInput)");
        }
    }

    @Override
    public void run(Communicator peer, SessionRequest request) throws IOException {
        Routine routine = routines.find(request.routine()).orElseThrow();
        ByteBuffer length = ByteBuffer.allocate(2);
        if (!HandlerSupport.readFrame(peer, length, "CALL output descriptor length")) {
            return;
        }
        int n = Short.toUnsignedInt(length.getShort(0));
        int max = RegionDescriptor.HEADER_BYTES + RegionDescriptor.MAX_KEY_BYTES;
        if (n < RegionDescriptor.HEADER_BYTES || n > max) {
            HandlerSupport.report(peer, ExchangeResult.error(SessionStatus.BAD_FRAME, "CALL output descriptor of "
                    + n + " bytes; a descriptor has " + RegionDescriptor.HEADER_BYTES + " to " + max));
            return;
        }
        ByteBuffer encoded = ByteBuffer.allocate(n);
        if (!HandlerSupport.readFrame(peer, encoded, "CALL output descriptor")) {
            return;
        }
        RegionDescriptor output;
        try {
            output = RegionDescriptor.fromBytes(encoded.array());
        } catch (IllegalArgumentException e) {
            HandlerSupport.report(peer, ExchangeResult.error(SessionStatus.BAD_FRAME, "CALL output descriptor: "
                    + e.getMessage()));
            return;
        }
        if (!output.access().contains(Access.REMOTE_WRITE)) {
            HandlerSupport.report(peer, ExchangeResult.error(SessionStatus.BAD_FRAME, "CALL output region "
                    + output + " does not allow REMOTE_WRITE"));
            return;
        }
        byte[] input = readInput(peer, request.inputLength());
        if (input == null) {
            return;
        }
        byte[] result;
        try {
            result = runBounded(routine, input);
        } catch (RoutineException e) {
            exit(peer, EXIT_REFUSED, e.getMessage());
            return;
        } catch (TimeoutException e) {
            LOG.warn("routine '{}' did not finish within {} (routineTimeout); interrupted", routine.name(), timeout);
            exit(peer, EXIT_FAILED, "routine '" + routine.name() + "' did not finish within " + timeout.toMillis()
                    + " ms (the server's routine timeout)");
            return;
        } catch (RuntimeException e) {
            LOG.warn("routine '{}' failed", routine.name(), e);
            exit(peer, EXIT_FAILED, "routine '" + routine.name() + "' failed: " + e);
            return;
        }
        if (result.length > output.length()) {
            HandlerSupport.report(peer, ExchangeResult.error(SessionStatus.OUTPUT_TOO_LARGE, "routine '"
                    + routine.name() + "' produced " + result.length + " bytes of output; the client's region holds "
                    + output.length()));
            return;
        }
        if (result.length > 0) {
            // registered-memory transports place from direct memory without another copy
            ByteBuffer src = ByteBuffer.allocateDirect(result.length).put(result).flip();
            try {
                peer.put(src, output, 0);
            } catch (IOException e) {
                HandlerSupport.report(peer, ExchangeResult.error(SessionStatus.FAILED, "putting the output of '"
                        + routine.name() + "' into the client's region failed: " + e.getMessage()));
                return;
            }
        }
        ExchangeResult.ok(ByteBuffer.allocate(8).putInt(EXIT_OK).putInt(result.length).flip()).send(peer);
        HandlerSupport.awaitEndOfStream(peer);
    }

    /** The whole input, held only as far as it arrived; null when the stream ended first (the client was told). */
    private static byte[] readInput(Communicator peer, int length) throws IOException {
        byte[] input = Payloads.read(peer, length);
        if (input.length < length) {
            HandlerSupport.reportTruncated(peer, "CALL input", input.length, length);
            return null;
        }
        return input;
    }

    /**
     * Runs the routine on a thread of its own, so its time can be limited: past the timeout the thread is
     * interrupted (routines that loop check {@link Thread#interrupted()}) and the call fails.
     */
    private byte[] runBounded(Routine routine, byte[] input) throws RoutineException, TimeoutException {
        FutureTask<byte[]> task = new FutureTask<>(() -> routine.run(input));
        Thread worker = new Thread(task, "servercomm-routine-" + THREADS.incrementAndGet());
        worker.setDaemon(true);
        worker.start();
        try {
            return task.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            task.cancel(true);
            throw e;
        } catch (InterruptedException e) {
            task.cancel(true);
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while routine '" + routine.name() + "' ran", e);
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof RoutineException r) {
                throw r;
            }
            if (cause instanceof RuntimeException r) {
                throw r;
            }
            throw new IllegalStateException(cause);
        }
    }

    private static void exit(Communicator peer, int code, String why) throws IOException {
        ExchangeResult r = ExchangeResult.okWithMessage(why, ByteBuffer.allocate(8).putInt(code).putInt(0).flip());
        r.send(peer);
        HandlerSupport.awaitEndOfStream(peer);
    }
}
