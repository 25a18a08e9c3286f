package io.rdmacomm.api.support;

import io.rdmacomm.api.Access;
import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.Endpoint;
import io.rdmacomm.api.MemoryRegion;
import io.rdmacomm.api.RegionDescriptor;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.AsynchronousCloseException;
import java.nio.channels.ClosedChannelException;
import java.util.Objects;
import java.util.Set;

/**
 * The part of a {@link Communicator} that every transport shares: the endpoint (updated to the bound one by
 * {@link #serve()}), the role a communicator takes (new, serving, connecting, connected) and the misuse errors of
 * taking a second one, idempotent {@link #close()}, the checks every connected call makes, the argument checks of
 * {@link #register}, and delegation of the stream and remote-memory calls to the connection's {@link Link}.
 *
 * <p>A transport supplies only what is its own: {@link #listen()} (bind), {@link #acceptNext()} (wait for a peer and
 * wrap its connection, usually through {@link #AbstractCommunicator(Endpoint, Link)}), {@link #dial()} (connect and
 * handshake; it names through {@link #abortDialWith(Runnable)} what a concurrent {@code close()} must close to stop
 * it) and {@link #stopServing()}. The contract is documented once, on {@link Communicator}.
 *
 * @param <L> the transport's connection
 */
public abstract class AbstractCommunicator<L extends AbstractCommunicator.Link> implements Communicator {

    /**
     * One connected peer: the I/O a connected communicator's calls delegate to, after the communicator checked that
     * it is connected and open (and, for {@link #register}, the arguments). Semantics as on {@link Communicator}.
     */
    public interface Link {
        /** The peer, as {@link Communicator#peerName()} reports it. */
        String peerName();

        int read(ByteBuffer dst) throws IOException;

        /** As {@link Communicator#available()}; the default cannot tell. */
        default int available() throws IOException {
            return 0;
        }

        /** As {@link Communicator#busyPoll}; the default has no progress to drive. */
        default boolean busyPoll(long nanos, java.util.function.BooleanSupplier until) {
            return false;
        }

        /** As {@link Communicator#canBlockingPoll()}; the default cannot. */
        default boolean canBlockingPoll() {
            return false;
        }

        /** As {@link Communicator#blockingPoll}; the default cannot wait. */
        default boolean blockingPoll(long nanos, java.util.function.BooleanSupplier until) {
            return false;
        }

        /** As {@link Communicator#wakeBlockingPoll()}. */
        default void wakeBlockingPoll() {
        }

        /** As {@link Communicator#notifyReadable(Runnable)}; the default cannot tell. */
        default boolean notifyReadable(Runnable listener) {
            return false;
        }

        void write(ByteBuffer src) throws IOException;

        /** As {@link Communicator#tryWrite(ByteBuffer)}; the default cannot write without possibly waiting. */
        default int tryWrite(ByteBuffer src) throws IOException {
            return -1;
        }

        /** As {@link Communicator#tryWrite(ByteBuffer[], int, int)}; the default takes one buffer at a time. */
        default long tryWrite(ByteBuffer[] srcs, int offset, int length) throws IOException {
            return TryWrites.each(this::tryWrite, srcs, offset, length);
        }

        void sync() throws IOException;

        /** Called with a direct buffer and a non-empty access set that a read-only buffer does not violate. */
        MemoryRegion register(ByteBuffer buffer, Set<Access> access) throws IOException;

        void put(ByteBuffer src, RegionDescriptor remote, long offset) throws IOException;

        /** Called with a writable {@code dst}. */
        void get(RegionDescriptor remote, long offset, ByteBuffer dst) throws IOException;

        /** Releases the connection; unblocks calls waiting in it. Called once, by {@link Communicator#close()}. */
        void close();
    }

    private enum Role { NEW, SERVING, CONNECTING, CONNECTED }

    private final Object lock = new Object();
    private volatile Endpoint endpoint;
    private volatile Role role;
    private volatile L link;
    private volatile boolean closed;
    /** What stops the dial in progress; guarded by {@link #lock}. */
    private Runnable abortDial;

    /** A new communicator on {@code endpoint}, neither serving nor connected. */
    protected AbstractCommunicator(Endpoint endpoint) {
        this.endpoint = Objects.requireNonNull(endpoint, "endpoint");
        this.role = Role.NEW;
    }

    /** The communicator {@link #accept()} returns for a peer of the server at {@code serverEndpoint}. */
    protected AbstractCommunicator(Endpoint serverEndpoint, L accepted) {
        this.endpoint = Objects.requireNonNull(serverEndpoint, "serverEndpoint");
        this.link = Objects.requireNonNull(accepted, "accepted");
        this.role = Role.CONNECTED;
    }

    /**
     * Binds and listens on {@link #endpoint()}; returns the endpoint as bound (with the port that port 0 picked).
     * Called at most once, with the state lock held, so a concurrent {@link #close()} waits for it.
     */
    protected abstract Endpoint listen() throws IOException;

    /**
     * Waits for the next peer and returns a connected communicator for it. Called once the communicator serves; a
     * close while waiting must end the wait with {@link AsynchronousCloseException}.
     */
    protected abstract Communicator acceptNext() throws IOException;

    /**
     * Connects to {@link #endpoint()} and completes the handshake, releasing what it opened if it fails. As soon as
     * it holds something whose closing stops it (a socket, a connection), it passes that to
     * {@link #abortDialWith(Runnable)}. A failure while the communicator is being closed reaches the caller of
     * {@link #connect()} as an {@link AsynchronousCloseException}.
     */
    protected abstract L dial() throws IOException;

    /**
     * Whether this transport sends {@code first} with its handshake ({@link #dial(ByteBuffer)}). When it does not
     * (the default), {@link #connect(ByteBuffer)} is {@link Communicator#connect(ByteBuffer)}'s: connect, then
     * write.
     */
    protected boolean sendsWithHandshake(ByteBuffer first) {
        return false;
    }

    /**
     * {@link #dial()} for a {@code first} that {@link #sendsWithHandshake} accepted: connects and completes the
     * handshake with {@code first} sent along as the stream's first bytes, returns only once the server accepted
     * the handshake, and leaves {@code first}'s position at its limit.
     */
    protected L dial(ByteBuffer first) throws IOException {
        throw new UnsupportedOperationException(getClass().getName() + " sends no bytes with its handshake");
    }

    /** Releases what {@link #listen()} started (listener, threads); called once, by {@link #close()}. */
    protected abstract void stopServing();

    /**
     * Makes a concurrent {@link #close()} run {@code abort} to stop the dial in progress. If the communicator was
     * closed already, runs it at once and throws.
     *
     * @throws AsynchronousCloseException if the communicator was closed meanwhile
     */
    protected final void abortDialWith(Runnable abort) throws AsynchronousCloseException {
        synchronized (lock) {
            if (!closed) {
                abortDial = abort;
                return;
            }
        }
        abort.run();
        throw new AsynchronousCloseException();
    }

    /** The connection, or null before one exists. */
    protected final L link() {
        return link;
    }

    @Override
    public final Endpoint endpoint() {
        return endpoint;
    }

    @Override
    public final String peerName() {
        L l = link;
        return l == null ? "unconnected" : l.peerName();
    }

    @Override
    public final void serve() throws IOException {
        synchronized (lock) {
            checkOpen();
            checkUnused("serve");
            endpoint = listen();
            role = Role.SERVING;
        }
    }

    @Override
    public final Communicator accept() throws IOException {
        checkOpen();
        Role r = role;
        if (r != Role.SERVING) {
            throw new IllegalStateException("accept() on " + endpoint
                    + (r == Role.NEW ? " before serve()" : ", which " + describe(r) + ": only a server accepts"));
        }
        return acceptNext();
    }

    @Override
    public final void connect() throws IOException {
        connect0(null);
    }

    @Override
    public final void connect(ByteBuffer first) throws IOException {
        if (sendsWithHandshake(Objects.requireNonNull(first, "first"))) {
            connect0(first);
        } else {
            Communicator.super.connect(first);
        }
    }

    private void connect0(ByteBuffer first) throws IOException {
        synchronized (lock) {
            checkOpen();
            checkUnused("connect");
            role = Role.CONNECTING;
        }
        L dialed;
        try {
            dialed = first == null ? dial() : dial(first);
        } catch (IOException | RuntimeException e) {
            synchronized (lock) {
                abortDial = null;
                if (!closed) {
                    role = Role.NEW;
                    throw e;
                }
            }
            AsynchronousCloseException ace = new AsynchronousCloseException();
            ace.initCause(e);
            throw ace;
        }
        synchronized (lock) {
            abortDial = null;
            if (!closed) {
                link = dialed;
                role = Role.CONNECTED;
                return;
            }
        }
        dialed.close();
        throw new AsynchronousCloseException();
    }

    @Override
    public final int read(ByteBuffer dst) throws IOException {
        return connected().read(dst);
    }

    @Override
    public final int available() throws IOException {
        return connected().available();
    }

    @Override
    public final boolean busyPoll(long nanos, java.util.function.BooleanSupplier until) {
        L l = link;
        return l != null && !closed && l.busyPoll(nanos, until);
    }

    @Override
    public final boolean canBlockingPoll() {
        L l = link;
        return l != null && !closed && l.canBlockingPoll();
    }

    @Override
    public final boolean blockingPoll(long nanos, java.util.function.BooleanSupplier until) {
        L l = link;
        return l != null && !closed && l.blockingPoll(nanos, until);
    }

    @Override
    public final void wakeBlockingPoll() {
        L l = link;
        if (l != null) {
            l.wakeBlockingPoll();
        }
    }

    @Override
    public final boolean notifyReadable(Runnable listener) {
        Objects.requireNonNull(listener, "listener");
        L l = link;
        if (l == null) {
            throw new IllegalStateException(endpoint + " is not connected (it " + describe(role)
                    + "): call connect(), or use a communicator returned by accept()");
        }
        return l.notifyReadable(listener);
    }

    @Override
    public final void write(ByteBuffer src) throws IOException {
        connected().write(src);
    }

    @Override
    public final int tryWrite(ByteBuffer src) throws IOException {
        return connected().tryWrite(src);
    }

    @Override
    public final long tryWrite(ByteBuffer[] srcs, int offset, int length) throws IOException {
        Objects.checkFromIndexSize(offset, length, srcs.length);
        return connected().tryWrite(srcs, offset, length);
    }

    @Override
    public final void sync() throws IOException {
        connected().sync();
    }

    @Override
    public final MemoryRegion register(ByteBuffer buffer, Set<Access> access) throws IOException {
        L l = connected();
        if (!buffer.isDirect()) {
            throw new IllegalArgumentException("only direct buffers can be registered, got " + buffer);
        }
        if (access.isEmpty()) {
            throw new IllegalArgumentException("empty access set: give REMOTE_READ, REMOTE_WRITE or both");
        }
        if (buffer.isReadOnly() && access.contains(Access.REMOTE_WRITE)) {
            throw new IllegalArgumentException("a read-only buffer cannot be registered for REMOTE_WRITE");
        }
        return l.register(buffer, access);
    }

    @Override
    public final void put(ByteBuffer src, RegionDescriptor remote, long offset) throws IOException {
        connected().put(src, remote, offset);
    }

    @Override
    public final void get(RegionDescriptor remote, long offset, ByteBuffer dst) throws IOException {
        L l = connected();
        if (dst.isReadOnly()) {
            throw new IllegalArgumentException("get into a read-only buffer");
        }
        l.get(remote, offset, dst);
    }

    @Override
    public final boolean isOpen() {
        return !closed;
    }

    @Override
    public final void close() {
        Runnable abort;
        L l;
        Role r;
        synchronized (lock) {
            if (closed) {
                return;
            }
            closed = true;
            abort = abortDial;
            abortDial = null;
            l = link;
            r = role;
        }
        if (abort != null) {
            abort.run();
        }
        if (r == Role.SERVING) {
            stopServing();
        }
        if (l != null) {
            l.close();
        }
    }

    private L connected() throws ClosedChannelException {
        if (closed) {
            throw new ClosedChannelException();
        }
        L l = link;
        if (l == null) {
            throw new IllegalStateException(endpoint + " is not connected (it " + describe(role)
                    + "): call connect(), or use a communicator returned by accept()");
        }
        return l;
    }

    private void checkOpen() throws ClosedChannelException {
        if (closed) {
            throw new ClosedChannelException();
        }
    }

    private void checkUnused(String call) {
        if (role != Role.NEW) {
            throw new IllegalStateException(call + "() on " + endpoint + ", which " + describe(role) + " already");
        }
    }

    private static String describe(Role r) {
        return switch (r) {
            case NEW -> "neither serves nor is connected";
            case SERVING -> "serves";
            case CONNECTING -> "is connecting";
            case CONNECTED -> "is connected";
        };
    }

    @Override
    public String toString() {
        return getClass().getSimpleName() + "[" + endpoint + (link != null ? " peer " + peerName() : "")
                + (closed ? " closed" : "") + "]";
    }
}
