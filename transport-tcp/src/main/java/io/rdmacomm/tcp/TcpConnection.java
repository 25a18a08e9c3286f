package io.rdmacomm.tcp;

import io.rdmacomm.api.Access;
import io.rdmacomm.api.CommunicatorException;
import io.rdmacomm.api.Endpoint;
import io.rdmacomm.api.MemoryRegion;
import io.rdmacomm.api.RegionDescriptor;
import io.rdmacomm.api.support.AbstractCommunicator;
import io.rdmacomm.api.support.Liveness;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.channels.AsynchronousCloseException;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.SocketChannel;
import java.util.Set;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One handshaken connection: the socket ({@link SocketIo}), its framed receive and send sides
 * ({@link FrameReader}, {@link FrameWriter}), the emulated remote memory ({@link RemoteMemory}, {@link OneSided}),
 * and who reads the socket.
 *
 * <p>Until remote memory is first used, the application's reader reads the socket itself (no hand-off, no
 * extra thread on the latency path) and serves any remote-memory frame it meets. From then on the
 * "rdmacomm-tcp-progress" thread owns socket reads, serves remote-memory frames at once and passes stream bytes
 * to {@code read} through a bounded {@link StreamPipe}.
 *
 * <p>When both sides asked for heartbeats in the handshake, the process's liveness thread sends them while this
 * side is idle (on a blocking channel, whose write may wait, through a heartbeat thread) and, once the peer has
 * been silent for {@code liveness}, closes the socket: every wait in it ends and every call from then on reports
 * the silence. Liveness alone keeps the channel blocking, so it costs the reads nothing.
 *
 * <p>{@link #available()} and {@link #notifyReadable} serve a thread that serves many connections. Before the
 * hand-over, {@code available} counts the current DATA frame's buffered bytes, else reads what the socket holds
 * without waiting (a blocking channel turns non-blocking for good on the first call, see
 * {@link SocketIo#makeNonBlocking}); {@code notifyReadable} does the same and arms the channel on the process's
 * {@link Readiness} selector only if that found nothing. After it, the {@link StreamPipe} answers both, and its
 * writer, the progress thread, tells the listener. A close, the peer's silence and a failure of the progress thread
 * tell it too.
 */
final class TcpConnection implements AbstractCommunicator.Link {
    private static final Logger LOG = LoggerFactory.getLogger(TcpConnection.class);
    private static final int RECEIVE_BUFFER_MIN = 64 * 1024;
    private static final int RECEIVE_BUFFER_MAX = 1024 * 1024;
    private static final int PIPE_BYTES = 256 * 1024;

    private final SocketIo io;
    private final Endpoint endpoint;
    private final Settings settings;
    /** Held by whoever reads the socket: an application read, or the progress thread for good. */
    private final ReentrantLock readLock = new ReentrantLock();
    private final FrameReader reader;
    private final FrameWriter writer;
    private final RemoteMemory memory;
    private final OneSided oneSided;
    private final Object progressLock = new Object();
    /** Set when close starts. */
    private volatile boolean closing;
    private volatile StreamPipe pipe;
    private Thread progress;
    /** Bytes that arrived but nobody read yet (FIONREAD): the peer lives even while the application reads nothing. */
    private final InputStream unread;
    private final Liveness.Watching liveness;
    /** Set when the peer was silent for the liveness time: every call fails with it from then on. */
    private volatile SocketTimeoutException silence;
    /** The listener {@link #notifyReadable} armed, until whoever finds it set first takes and runs it. */
    private final AtomicReference<Runnable> readinessListener = new AtomicReference<>();
    /** {@link #tellReadable}, allocated once: the readiness selector's attachment and the pipe's callback. */
    private final Runnable tellReadable = this::tellReadable;
    /** {@link FrameWriter#heartbeat}, allocated once, for {@link #HEARTBEATS}. */
    private final Runnable sendHeartbeat;

    /**
     * Sends the heartbeats of blocking channels, which may wait for room: threads ("rdmacomm-tcp-heartbeat",
     * daemons) start when no idle one is left and end after an idle second, so none outlives the process's last
     * connection by much; a process whose heartbeats come less often than that starts a thread for each.
     */
    private static final ThreadPoolExecutor HEARTBEATS = new ThreadPoolExecutor(0, Integer.MAX_VALUE, 1,
            TimeUnit.SECONDS, new SynchronousQueue<>(), r -> {
                Thread t = new Thread(r, "rdmacomm-tcp-heartbeat");
                t.setDaemon(true);
                return t;
            });

    private TcpConnection(SocketIo io, SocketChannel channel, Endpoint endpoint, Settings settings,
            long peerHeartbeat) throws IOException {
        this.io = io;
        this.endpoint = endpoint;
        this.settings = settings;
        this.writer = new FrameWriter(io, settings);
        this.sendHeartbeat = writer::heartbeat;
        this.memory = new RemoteMemory(io::peer, settings.maxRegistered(), settings.busyPoll());
        this.oneSided = new OneSided(memory, writer, this::startProgress, settings.readTimeout());
        int receiveBytes = Math.max(RECEIVE_BUFFER_MIN, Math.min(settings.sendBuffer(), RECEIVE_BUFFER_MAX))
                + Wire.HEADER_LENGTH;
        this.reader = new FrameReader(io, oneSided, receiveBytes);
        this.unread = channel.socket().getInputStream();
        this.liveness = peerHeartbeat == 0 ? null : Liveness.watch(new Watched(), settings.liveness(), peerHeartbeat);
    }

    /**
     * Takes over a handshaken channel (blocking or not, registered nowhere) and its TLS session (null without
     * TLS); closes it on failure.
     *
     * @param peerHeartbeat the heartbeat period the peer asked for in the handshake; 0: heartbeats are off both ways
     */
    static TcpConnection open(SocketChannel channel, TlsSession tls, Endpoint endpoint, Settings settings,
            long peerHeartbeat) throws IOException {
        SocketIo io = SocketIo.open(channel, tls, settings);
        try {
            return new TcpConnection(io, channel, endpoint, settings, peerHeartbeat);
        } catch (IOException | RuntimeException e) {
            io.close();
            throw e;
        }
    }

    /** This connection as the liveness thread sees it. */
    private final class Watched implements Liveness.Peer {
        @Override
        public long received() {
            try {
                return reader.received() + unread.available();
            } catch (IOException closed) {
                return reader.received();
            }
        }

        @Override
        public long sent() {
            return writer.sent();
        }

        /**
         * On a non-blocking channel, sends it now if the socket takes it; on a blocking channel, whose write may
         * wait, hands it to a heartbeat thread (a stuck heartbeat holds the writer's lock, so the next ones skip).
         */
        @Override
        public void heartbeat() {
            if (io.blocking()) {
                HEARTBEATS.execute(sendHeartbeat);
            } else {
                writer.heartbeat();
            }
        }

        /** Input waits that nobody reads, and no writer waits on the peer: the peer may be stuck behind us. */
        @Override
        public boolean excused() {
            try {
                return unread.available() > 0 && !writer.busy();
            } catch (IOException closed) {
                return false;
            }
        }

        @Override
        public void silent(SocketTimeoutException cause) {
            silence = cause;
            LOG.warn("{}: {}", endpoint, cause.getMessage());
            io.close(); // ends every wait on the socket; the waiting calls then report the silence
            tellReadable();
        }

        @Override
        public String peerName() {
            return io.peer();
        }
    }

    /** Throws if this connection was closed, or failed for its peer's silence. */
    private void checkOpen() throws IOException {
        if (io.isClosed()) {
            throw silence != null ? silenceFailure() : new ClosedChannelException();
        }
    }

    private SocketTimeoutException silenceFailure() {
        SocketTimeoutException e = new SocketTimeoutException(silence.getMessage());
        e.initCause(silence);
        return e;
    }

    @Override
    public String peerName() {
        return io.peer();
    }

    @Override
    public int read(ByteBuffer dst) throws IOException {
        checkOpen();
        if (!dst.hasRemaining()) {
            return 0;
        }
        StreamPipe p = pipe;
        if (p == null) {
            readLock.lock();
            try {
                int n = reader.readStream(dst, settings.readTimeout());
                if (n != FrameReader.HANDED_OVER) {
                    return n;
                }
            } catch (IOException e) {
                throw failure(e, "read from");
            } finally {
                readLock.unlock();
            }
            p = pipe;
        }
        return p.read(dst, settings.readTimeout());
    }

    /**
     * Before the hand-over: the current DATA frame's buffered bytes, else what a read of the socket without waiting
     * brings ({@link FrameReader#available}); after it: the pipe's bytes.
     */
    @Override
    public int available() throws IOException {
        checkOpen();
        StreamPipe p = pipe;
        if (p == null) {
            if (lockReader()) {
                try {
                    io.makeNonBlocking();
                    int n = reader.available();
                    if (n != FrameReader.HANDED_OVER) {
                        return n;
                    }
                } catch (IOException e) {
                    throw failure(e, "read from");
                } finally {
                    readLock.unlock();
                }
            }
            p = pipe;
        }
        try {
            return p.available();
        } catch (AsynchronousCloseException e) {
            checkOpen();
            throw e;
        }
    }

    /**
     * Runs {@code listener} at once if {@link #available()} is non-zero now or throws (it reads the socket without
     * waiting, as {@code available} does, so bytes that arrived since are seen); else arms the channel on the
     * readiness selector (before the hand-over) or leaves the listener to the pipe's writer (after it).
     */
    @Override
    public boolean notifyReadable(Runnable listener) {
        readinessListener.set(listener);
        if (!io.isClosed() && !closing && !readableNow()) {
            return true; // the readiness thread, the pipe's writer or the close tells the listener
        }
        tellReadable();
        return true;
    }

    /**
     * Before the hand-over to the progress thread: the process's {@link Readiness} selector, on which this
     * connection's readiness is announced, can be waited on by the caller ({@link #blockingPoll}). After it, the
     * pipe's writer announces it, and there is nothing to wait on in its place.
     */
    @Override
    public boolean canBlockingPoll() {
        return pipe == null && !closing && !io.isClosed();
    }

    /**
     * Selects on the process's readiness selector in the readiness thread's place ({@link Readiness#selectInPlace}):
     * listeners armed by {@link #notifyReadable}, this connection's and others', run on the calling thread.
     */
    @Override
    public boolean blockingPoll(long nanos, java.util.function.BooleanSupplier until) {
        return canBlockingPoll() && Readiness.selectInPlace(nanos, until);
    }

    @Override
    public void wakeBlockingPoll() {
        Readiness.wakeInPlace();
    }

    /**
     * Whether {@link #available()} may be non-zero now; else arms the channel on the readiness selector (before the
     * hand-over) or leaves it to the pipe's writer (after it), which then tell the listener.
     */
    private boolean readableNow() {
        StreamPipe p = pipe;
        if (p == null) {
            try {
                if (lockReader()) {
                    try {
                        io.makeNonBlocking();
                        int n = reader.available();
                        if (n == 0) {
                            io.armReadable(tellReadable);
                            return false;
                        }
                        if (n != FrameReader.HANDED_OVER) {
                            return true;
                        }
                    } finally {
                        readLock.unlock();
                    }
                }
            } catch (IOException | RuntimeException e) {
                return true; // available() reports it (a key cancelled by a close, too)
            }
            p = pipe;
        }
        return p.readable();
    }

    /** Runs the armed listener, if any, once: whoever takes it runs it. Never throws. */
    private void tellReadable() {
        if (readinessListener.get() == null) {
            return;
        }
        Runnable r = readinessListener.getAndSet(null);
        if (r != null) {
            try {
                r.run();
            } catch (RuntimeException e) {
                LOG.warn("{}: a readiness listener failed", endpoint, e);
            }
        }
    }

    /**
     * Takes the read lock for the application's reader without waiting for the progress thread, which holds it for
     * good once it owns the socket: false then. Other holders (a close discarding unread input) hold it briefly.
     */
    private boolean lockReader() throws IOException {
        try {
            while (!readLock.tryLock(1, TimeUnit.MILLISECONDS)) {
                if (pipe != null) {
                    return false;
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new java.io.InterruptedIOException("interrupted waiting for the read lock");
        }
        return true;
    }

    @Override
    public void write(ByteBuffer src) throws IOException {
        checkOpen();
        try {
            writer.write(src);
        } catch (IOException e) {
            throw failure(e, "write to");
        }
    }

    /**
     * Plain TCP only (-1 with TLS): {@link FrameWriter#tryWrite}. A blocking channel turns non-blocking first, which
     * needs both the read lock and the writer free (the switch waits for a channel read or write in progress): -1
     * while an application read waits in the read lock, or for good once the progress thread holds it; 0 while a
     * writer is busy.
     */
    @Override
    public int tryWrite(ByteBuffer src) throws IOException {
        checkOpen();
        int can = canTryWrite();
        if (can <= 0) {
            return can;
        }
        try {
            return writer.tryWrite(src);
        } catch (IOException e) {
            throw failure(e, "write to");
        }
    }

    @Override
    public long tryWrite(ByteBuffer[] srcs, int offset, int length) throws IOException {
        checkOpen();
        int can = canTryWrite();
        if (can <= 0) {
            return can;
        }
        try {
            return writer.tryWrite(srcs, offset, length);
        } catch (IOException e) {
            throw failure(e, "write to");
        }
    }

    /**
     * 1 if the channel is plain and non-blocking (turned so now if the read lock and the writer are free); 0 if a
     * writer holds the channel; -1 if tryWrite cannot be offered (TLS, or a reader holds the read lock).
     */
    private int canTryWrite() throws IOException {
        if (io.tls() != null) {
            return -1;
        }
        if (io.blocking()) {
            if (!readLock.tryLock()) {
                return -1;
            }
            try {
                if (!writer.tryMakeNonBlocking()) {
                    return 0;
                }
            } catch (IOException e) {
                throw failure(e, "write to");
            } finally {
                readLock.unlock();
            }
        }
        return 1;
    }

    @Override
    public void sync() throws IOException {
        checkOpen();
        try {
            writer.sync();
        } catch (IOException e) {
            throw failure(e, "sync with");
        }
    }

    @Override
    public MemoryRegion register(ByteBuffer buffer, Set<Access> access) throws IOException {
        checkOpen();
        MemoryRegion region = memory.register(buffer, access);
        try {
            startProgress();
        } catch (IOException e) {
            region.close();
            throw e;
        }
        return region;
    }

    @Override
    public void put(ByteBuffer src, RegionDescriptor remote, long offset) throws IOException {
        checkOpen();
        try {
            oneSided.put(src, remote, offset);
        } catch (IOException e) {
            throw failure(e, "put to");
        }
    }

    @Override
    public void get(RegionDescriptor remote, long offset, ByteBuffer dst) throws IOException {
        checkOpen();
        try {
            oneSided.get(remote, offset, dst);
        } catch (IOException e) {
            throw failure(e, "get from");
        }
    }

    /** Hands socket reads to the progress thread, once; the application's reader moves to the pipe. */
    private void startProgress() throws IOException {
        synchronized (progressLock) {
            if (progress != null) {
                return;
            }
            if (closing) {
                throw new ClosedChannelException();
            }
            pipe = new StreamPipe(PIPE_BYTES, settings.busyPoll(), io.peer(), tellReadable);
            reader.handOver();
            Thread t = new Thread(this::progressLoop, "rdmacomm-tcp-progress");
            t.setDaemon(true);
            progress = t;
            t.start();
        }
    }

    private void progressLoop() {
        StreamPipe p = pipe;
        readLock.lock(); // waits for an application read still on the socket to step aside
        try {
            reader.pump(p);
            p.finish();
            memory.fail(new EOFException(io.peer() + " closed the connection"));
        } catch (IOException | RuntimeException e) {
            IOException f;
            if (io.isClosed()) {
                f = silence != null ? silenceFailure() : new AsynchronousCloseException();
            } else {
                f = e instanceof IOException ioe ? failure(ioe, "reading from")
                        : new CommunicatorException("reading from " + io.peer() + " failed: " + e, e);
                LOG.warn("{}: connection with {} failed", endpoint, io.peer(), e);
            }
            p.fail(f);
            memory.fail(f);
        } finally {
            readLock.unlock();
        }
    }

    private IOException failure(IOException e, String what) {
        if (silence != null) {
            return silenceFailure();
        }
        return io.failure(e, what, this::close);
    }

    /**
     * Unless another thread is writing, delivers what was written but not synced and ends the stream; then closes
     * the socket, which ends every wait in it, fails one-sided operations in flight and deregisters all regions.
     */
    @Override
    public void close() {
        synchronized (progressLock) {
            if (closing) {
                return;
            }
            closing = true;
        }
        try {
            if (writer.endStream()) {
                io.discardUnreadInput(readLock);
            }
        } finally {
            if (liveness != null) {
                liveness.close();
            }
            io.close();
            memory.failClosed();
            memory.deregisterAll();
            StreamPipe p = pipe;
            if (p != null) {
                p.close();
            }
            tellReadable();
            Thread t;
            synchronized (progressLock) {
                t = progress;
            }
            if (t != null && t != Thread.currentThread()) {
                join(t);
            }
        }
    }

    static void join(Thread t) {
        try {
            t.join(TimeUnit.SECONDS.toMillis(10));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (t.isAlive()) {
            LOG.warn("thread {} did not stop within 10s", t.getName());
        }
    }
}
