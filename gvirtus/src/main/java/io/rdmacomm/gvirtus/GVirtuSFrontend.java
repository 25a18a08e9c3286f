package io.rdmacomm.gvirtus;

import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.Communicators;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.channels.ClosedChannelException;
import java.util.Objects;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Executes GVirtuS routines on a backend over one connected communicator, for as many calls as needed, as
 * GVirtuS's {@code Frontend::Execute} does: write the request, sync, read the reply.
 *
 * <pre>{@code
 * try (GVirtuSFrontend frontend = GVirtuSFrontend.connect("tcp://gpu-host:9999?wire=raw")) {
 *     GVirtuSResult r = frontend.execute("cudaGetDeviceCount", new byte[0]);
 *     int devices = r.outputBuffer().getIntArray()[0];
 * }
 * }</pre>
 *
 * <p><b>Thread safety.</b> Safe for concurrent use: the protocol has no request identifiers, so a reply belongs to
 * the request before it, and calls are serialised, each holding the connection from its request to its reply.
 * Threads wanting parallel calls should use one frontend (one connection, one backend session) each, as GVirtuS
 * gives each frontend thread its own connection.
 *
 * <p><b>Failures.</b> A call that fails in the middle of the exchange (I/O error, end of stream, a reply over
 * {@link GVirtuSLimits#maxOutputBytes()}) leaves the stream at an unknown point; the frontend then closes the
 * communicator, which also ends the backend's session, and every later call fails with an {@link IOException}
 * naming the first failure.
 */
public final class GVirtuSFrontend implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(GVirtuSFrontend.class);

    private final Communicator communicator;
    private final GVirtuSLimits limits;
    private final ReentrantLock lock = new ReentrantLock();
    private volatile IOException broken;

    /** A frontend on a connected communicator, which it owns from now on (closing the frontend closes it). */
    public GVirtuSFrontend(Communicator connected) {
        this(connected, GVirtuSLimits.DEFAULT);
    }

    /** As {@link #GVirtuSFrontend(Communicator)}, with limits on the replies it accepts. */
    public GVirtuSFrontend(Communicator connected, GVirtuSLimits limits) {
        this.communicator = Objects.requireNonNull(connected, "connected");
        this.limits = Objects.requireNonNull(limits, "limits");
    }

    /** Connects to the endpoint ({@link Communicators#connect(String)}) and returns a frontend on it. */
    public static GVirtuSFrontend connect(String uri) throws IOException {
        return new GVirtuSFrontend(Communicators.connect(uri));
    }

    /**
     * Runs {@code routine} on the backend with the marshalled {@code input} and returns its result, whatever
     * the exit code (an unknown routine is {@link GVirtuSResult#EXIT_UNKNOWN_ROUTINE}).
     *
     * @throws IOException if the exchange failed; the frontend is unusable afterwards (see the class comment)
     * @throws InterruptedIOException if interrupted while waiting for another thread's call to finish; the
     *     frontend stays usable then
     */
    public GVirtuSResult execute(String routine, byte[] input) throws IOException {
        GVirtuSRequest request = new GVirtuSRequest(routine, input);
        try {
            lock.lockInterruptibly();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("interrupted waiting to call '" + routine + "' on "
                    + communicator.peerName());
        }
        try {
            IOException earlier = broken;
            if (earlier != null) {
                throw new IOException("GVirtuS frontend to " + communicator.peerName() + " is unusable: an earlier "
                        + "call failed mid-exchange (" + earlier.getMessage() + ")", earlier);
            }
            try {
                request.writeTo(communicator);
                return Wire.readResult(communicator, limits, "request '" + routine + "'");
            } catch (IOException | RuntimeException e) {
                throw fail(routine, e);
            }
        } finally {
            lock.unlock();
        }
    }

    /** {@link #execute(String, byte[])} with the buffer's bytes as input. */
    public GVirtuSResult execute(String routine, GVirtuSBuffer input) throws IOException {
        return execute(routine, input.toByteArray());
    }

    private IOException fail(String routine, Exception e) {
        IOException failure = e instanceof IOException io ? io
                : new IOException("call to '" + routine + "' on " + communicator.peerName() + " failed: " + e, e);
        // the next reply could belong to this request: close, so no later call reads it as its own
        broken = failure;
        if (!(e instanceof ClosedChannelException)) {
            LOG.warn("GVirtuS frontend to {}: call to '{}' failed mid-exchange, closing the connection: {}",
                    communicator.peerName(), routine, e.toString());
        }
        try {
            communicator.close();
        } catch (IOException | RuntimeException closeFailure) {
            failure.addSuppressed(closeFailure);
        }
        return failure;
    }

    /** The communicator this frontend talks over. */
    public Communicator communicator() {
        return communicator;
    }

    /**
     * Closes the communicator, which ends the backend's session (the way a GVirtuS frontend ends one). A call
     * in progress in another thread fails. Idempotent.
     */
    @Override
    public void close() throws IOException {
        communicator.close();
    }

    @Override
    public String toString() {
        return "GVirtuSFrontend[" + communicator.peerName() + (broken != null ? ", broken]" : "]");
    }
}
