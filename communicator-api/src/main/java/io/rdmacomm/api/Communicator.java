package io.rdmacomm.api;

import io.rdmacomm.api.support.TryWrites;
import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.AsynchronousCloseException;
import java.nio.channels.ClosedChannelException;
import java.util.Set;

/**
 * A blocking, socket-like byte stream between two peers, in the style of GVirtuS's {@code Communicator}
 * and of {@link java.nio.channels.SocketChannel}.
 *
 * <p>A communicator is created unconnected by {@link Communicators#open(Endpoint)} and then takes one of two
 * roles: the <em>server</em> role ({@link #serve()}, then {@link #accept()} any number of times, each returning a
 * new connected communicator for one peer) or the <em>client</em> role ({@link #connect()}). A connected
 * communicator carries an ordered, reliable byte stream in each direction.
 *
 * <p><b>Concurrency.</b> One thread may read while another writes (full duplex). Two concurrent readers, or two
 * concurrent writers, are not supported. {@link #close()} may be called from any thread at any time.
 *
 * <p><b>Timeouts.</b> Every blocking call is bounded by the endpoint's options: {@code connectTimeout},
 * {@code acceptTimeout}, {@code readTimeout} and {@code handshakeTimeout} (see {@link EndpointOption}). A zero
 * accept or read timeout means "wait until the peer acts or the communicator is closed".
 *
 * <p><b>Errors.</b> Failures are {@link IOException}s: {@link EOFException} for a stream that ended early,
 * {@link ClosedChannelException} after {@link #close()}, {@link AsynchronousCloseException} for a call unblocked
 * by a concurrent close, {@link java.net.SocketTimeoutException} when a timeout expires,
 * {@link java.net.ConnectException} for a refused or unreachable peer, and {@link CommunicatorException} for
 * protocol violations and transport failures. Misuse (reading before connecting, serving twice) is an
 * {@link IllegalStateException}. Messages name the endpoint and what was expected.
 */
public interface Communicator extends AutoCloseable {

    /**
     * The endpoint this communicator was opened on. After {@link #serve()} on port 0 it carries the port that
     * was actually bound; for a communicator returned by {@link #accept()} it names the server endpoint.
     */
    Endpoint endpoint();

    /**
     * A short description of the remote peer for messages and logs ({@code "127.0.0.1:53122"}), or
     * {@code "unconnected"} before a connection exists.
     */
    String peerName();

    /**
     * Takes the server role: binds and listens on the endpoint. Port 0 picks a free port, which
     * {@link #endpoint()} reports afterwards.
     *
     * @throws IllegalStateException if this communicator already serves or is connected
     * @throws IOException if the address cannot be bound; the message names the endpoint
     */
    void serve() throws IOException;

    /**
     * Blocks until the next peer has connected and completed the handshake, and returns a new, connected
     * communicator for it. A peer that fails the handshake (wrong magic number or version, garbage, silence
     * past {@code handshakeTimeout}) is dropped and logged; accept goes on waiting for the next peer.
     *
     * @throws IllegalStateException if {@link #serve()} has not been called
     * @throws java.net.SocketTimeoutException if {@code acceptTimeout} is non-zero and expires
     * @throws AsynchronousCloseException if this communicator is closed while waiting
     * @throws ClosedChannelException if this communicator is closed
     */
    Communicator accept() throws IOException;

    /**
     * Takes the client role: connects to the endpoint and completes the handshake.
     *
     * @throws IllegalStateException if this communicator already serves or is connected
     * @throws java.net.ConnectException if the peer refuses or cannot be reached; the message names the endpoint
     * @throws java.net.SocketTimeoutException if {@code connectTimeout} expires; the message names the endpoint
     * @throws CommunicatorException if the peer does not speak this protocol
     */
    void connect() throws IOException;

    /**
     * {@link #connect()}, then {@link #write(ByteBuffer) write(first)}: for a protocol whose client speaks first, as
     * a request that opens a session does. A transport that can sends {@code first} in the same flight as its
     * handshake, without waiting for the server's answer, so that the request arrives one round trip earlier (as
     * TCP Fast Open and TLS early data do); the server reads it only after it accepted the handshake. Either way
     * this returns, like {@code connect()}, only once the server accepted the handshake, and throws what
     * {@code connect()} throws if it did not, or if its answer did not come in time (early bytes may then have
     * reached the server, which sees the connection close). Whether the bytes went early or
     * not, they are written as by {@code write}: {@link #sync()} guarantees their delivery, and a failure of the
     * connection once the handshake succeeded is not a failure of the connect: as for bytes a write buffered, the
     * next {@code sync} or {@code write} reports it, and {@code read} still takes what the peer sent before it went
     * (a server that refuses a request at once and closes says why).
     *
     * @param first the client's first bytes (all remaining; the position ends at the limit once they are written)
     */
    default void connect(ByteBuffer first) throws IOException {
        connect();
        try {
            write(first);
        } catch (ClosedChannelException closedHere) {
            throw closedHere; // closed by this side (a concurrent close): not the peer's doing
        } catch (IOException failedAfterTheHandshake) {
            // the connection failed: the next sync or write reports it (see above)
        }
    }

    /**
     * Reads at least one byte into {@code dst}, blocking until one is available, and returns the count; short
     * reads are normal. Returns {@code -1} once the peer has closed cleanly and every byte it wrote has been
     * read. Returns 0 only when {@code dst} has no space remaining.
     *
     * @throws java.net.SocketTimeoutException if {@code readTimeout} is non-zero and no byte arrives in time
     * @throws AsynchronousCloseException if another thread closes this communicator while the read waits
     * @throws ClosedChannelException if this communicator is closed
     * @throws IllegalStateException if this communicator is not connected
     */
    int read(ByteBuffer dst) throws IOException;

    /**
     * Fills {@code dst} completely, as GVirtuS callers expect of {@code Read(n)}.
     *
     * @throws EOFException if the stream ends before {@code dst} is full; the message says how many bytes were
     *     expected and how many arrived
     */
    default void readFully(ByteBuffer dst) throws IOException {
        int wanted = dst.remaining();
        while (dst.hasRemaining()) {
            if (read(dst) < 0) {
                throw new EOFException("end of stream from " + peerName() + " after "
                        + (wanted - dst.remaining()) + " of " + wanted + " bytes");
            }
        }
    }

    /**
     * Bytes that {@link #read} returns at once, without waiting for the peer: at least 1 when bytes are there, -1
     * once the peer ended the stream and every byte was read (the next read returns -1), 0 when nothing can be read
     * yet, and 0 as well on a communicator that cannot tell ({@link #notifyReadable} returns false there). It never
     * waits for the peer. Meant for a thread that serves many connections: after {@link #notifyReadable} fires, a
     * read of at most {@code available()} bytes does not block.
     *
     * @throws IOException the connection's failure, as the next read would throw it
     * @throws ClosedChannelException if this communicator is closed
     */
    default int available() throws IOException {
        return 0;
    }

    /**
     * Asks to be told, once, when {@link #available()} may have become non-zero: bytes arrived, the stream ended, or
     * the connection failed or closed. If that is already so, the listener runs before this method returns, on the
     * calling thread; otherwise it runs on a transport thread, later. One call, at most one run; call again after
     * reading to be told again. The listener must not block (hand the connection to a thread of its own, e.g. by
     * queueing it) and must tolerate a spurious run (check {@link #available()}).
     *
     * @return false if this communicator cannot tell (the default): then read on a thread that may wait
     */
    default boolean notifyReadable(Runnable listener) {
        return false;
    }

    /**
     * Spins on the calling thread for up to {@code nanos}, driving the transport as a read that busy-polls for its
     * peer does ({@code busyPoll}), until {@code until} is true; then the transport's own threads take over again.
     * For a thread serving many connections that has nothing to do for a moment: arrivals on this connection, and on
     * others sharing its transport's progress, are taken in on this thread (their {@link #notifyReadable}
     * listeners run here) instead of waking another thread. Returns whether {@code until} became true. Transports
     * that need no such progress (their arrivals are announced by the operating system) return false at once.
     */
    default boolean busyPoll(long nanos, java.util.function.BooleanSupplier until) {
        return false;
    }

    /**
     * Whether {@link #blockingPoll} can wait here: the transport has progress of its own that a thread can sleep on
     * (rdma:// on UCX: the UCX worker's wait; tcp://: the process's readiness selector). False by
     * default.
     */
    default boolean canBlockingPoll() {
        return false;
    }

    /**
     * As {@link #busyPoll}, but sleeping in the transport's own wait instead of spinning: the calling thread waits up
     * to {@code nanos} for the events of this connection's progress (shared with other connections), takes them in
     * itself (their {@link #notifyReadable} listeners run on it) and returns once {@code until} is true, the time is
     * up, or {@link #wakeBlockingPoll()} was called. Meanwhile the transport's progress thread stays aside, so an
     * arrival wakes one thread, not a progress thread that then wakes the caller. For a thread serving many
     * connections, such as an event loop, with nothing to do. One thread at a time waits on a transport's progress;
     * a second caller returns false at once (wait another way). Returns whether {@code until} became true; false at
     * once where {@link #canBlockingPoll()} is false. After a call that returned true the progress thread expects
     * the caller back and stays aside a little longer (ucx-ffm: up to 10 ms), so a caller that then sleeps elsewhere
     * for long delays arrivals by up to that; after a call whose time was up it takes over at once.
     */
    default boolean blockingPoll(long nanos, java.util.function.BooleanSupplier until) {
        return false;
    }

    /**
     * Ends a {@link #blockingPoll} on this connection's progress early (its {@code until} is checked again): for the
     * thread that made {@code until} true from elsewhere. Any thread may call it; it does nothing where
     * {@link #canBlockingPoll()} is false or no thread waits.
     */
    default void wakeBlockingPoll() {
    }

    /**
     * Takes all remaining bytes of {@code src} (the buffer's position ends at its limit). The bytes may be
     * buffered; {@link #sync()} guarantees their delivery. Blocks while the peer is not consuming
     * (backpressure): nothing is ever dropped.
     *
     * @throws ClosedChannelException if this communicator is closed
     * @throws IOException if the connection failed; bytes written since the last successful sync may be lost
     */
    void write(ByteBuffer src) throws IOException;

    /**
     * Takes as many bytes of {@code src} as this communicator can take without waiting, and sends them on: never
     * blocks, neither for the peer to consume (backpressure) nor for a completion. The bytes taken need no
     * {@link #sync()} to leave (a sync still waits for their delivery); the rest stay in {@code src}. For an
     * event loop that writes on its own thread while there is room and hands the rest to a thread that may wait.
     *
     * @return the bytes taken, 0 if none fit now; -1 if this communicator cannot write without possibly waiting
     *         (the default): then {@link #write(ByteBuffer)} on a thread that may wait
     * @throws ClosedChannelException if this communicator is closed
     * @throws IOException if the connection failed
     */
    default int tryWrite(ByteBuffer src) throws IOException {
        if (!isOpen()) {
            throw new ClosedChannelException();
        }
        return -1;
    }

    /**
     * {@link #tryWrite(ByteBuffer)} of {@code length} buffers from {@code srcs[offset]} on, in order, as one write: a
     * transport sends what it took on once, not once per buffer. Stops at the first buffer not taken whole.
     *
     * @return the bytes taken, 0 if none fit now; -1 if this communicator cannot write without possibly waiting
     * @throws ClosedChannelException if this communicator is closed
     * @throws IOException if the connection failed
     */
    default long tryWrite(ByteBuffer[] srcs, int offset, int length) throws IOException {
        return TryWrites.each(this::tryWrite, srcs, offset, length);
    }

    /**
     * Returns once every byte written before this call has been handed to the peer: flushed to the peer's
     * socket on TCP, placed in the peer's memory on RDMA.
     */
    void sync() throws IOException;

    /** Whether {@link #close()} has not yet been called. */
    boolean isOpen();

    /**
     * Closes this communicator, releasing every thread, socket and native resource it holds. Idempotent.
     * Unblocks a {@link #read}, {@link #accept()} or {@link #write} waiting in another thread, which then throws
     * {@link AsynchronousCloseException}; afterwards every I/O call throws {@link ClosedChannelException}.
     * If no other thread is writing at that moment, close first tries, within the read timeout (or a few
     * seconds when that is 0), to deliver bytes written but not yet synced, then ends the stream so the peer
     * reads -1; a failure to deliver them is not reported: call {@link #sync()} before closing to know.
     */
    @Override
    void close() throws IOException;

    // ---- one-sided remote memory -------------------------------------------------------------------------

    /**
     * Registers a direct buffer (its content between position and limit) for one-sided access by the peer of
     * this connection, with the given rights. Send the region's {@link MemoryRegion#descriptor() descriptor}
     * to the peer by any means (usually this stream); the peer then calls {@link #put} and {@link #get}.
     *
     * @throws IllegalArgumentException if the buffer is not direct, is read-only while remote write is asked
     *     for, or the access set is empty
     * @throws CommunicatorException if the transport's registration limit ({@code maxRegistered}) would be
     *     exceeded or the provider refuses the registration
     * @throws UnsupportedOperationException if this transport offers no remote memory
     */
    default MemoryRegion register(ByteBuffer buffer, Set<Access> access) throws IOException {
        throw new UnsupportedOperationException(endpoint().scheme() + ":// offers no remote memory");
    }

    /**
     * Writes the remaining bytes of {@code src} into the peer's region at {@code offset} and returns once they
     * are placed in the peer's memory. The peer's application thread takes no part.
     *
     * @throws RemoteAccessException if the range is out of the region's bounds, the key is unknown or was
     *     deregistered, or the region does not allow remote writes; the connection stays usable
     */
    default void put(ByteBuffer src, RegionDescriptor remote, long offset) throws IOException {
        throw new UnsupportedOperationException(endpoint().scheme() + ":// offers no remote memory");
    }

    /**
     * Reads {@code dst.remaining()} bytes from the peer's region at {@code offset} into {@code dst} and returns
     * once they have arrived.
     *
     * @throws RemoteAccessException if the range is out of the region's bounds, the key is unknown or was
     *     deregistered, or the region does not allow remote reads; the connection stays usable
     * @throws IllegalArgumentException if {@code dst} is read-only
     */
    default void get(RegionDescriptor remote, long offset, ByteBuffer dst) throws IOException {
        throw new UnsupportedOperationException(endpoint().scheme() + ":// offers no remote memory");
    }
}
