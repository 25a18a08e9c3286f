package io.rdmacomm.tcp;

import io.rdmacomm.api.Access;
import io.rdmacomm.api.CommunicatorException;
import io.rdmacomm.api.Endpoint;
import io.rdmacomm.api.MemoryRegion;
import io.rdmacomm.api.RegionDescriptor;
import io.rdmacomm.api.support.AbstractCommunicator;
import java.io.EOFException;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.channels.AsynchronousCloseException;
import java.nio.channels.ClosedByInterruptException;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.SocketChannel;
import java.util.Set;
import java.util.concurrent.TimeUnit;
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

    private TcpConnection(SocketIo io, Endpoint endpoint, Settings settings) {
        this.io = io;
        this.endpoint = endpoint;
        this.settings = settings;
        this.writer = new FrameWriter(io, settings);
        this.memory = new RemoteMemory(io.peer(), settings.maxRegistered(), settings.busyPoll());
        this.oneSided = new OneSided(memory, writer, this::startProgress, settings.readTimeout());
        int receiveBytes = Math.max(RECEIVE_BUFFER_MIN, Math.min(settings.sendBuffer(), RECEIVE_BUFFER_MAX))
                + Wire.HEADER_LENGTH;
        this.reader = new FrameReader(io, oneSided, receiveBytes);
    }

    /** Takes over a handshaken channel (blocking or not, registered nowhere); closes it on failure. */
    static TcpConnection open(SocketChannel channel, Endpoint endpoint, Settings settings) throws IOException {
        return new TcpConnection(SocketIo.open(channel, settings), endpoint, settings);
    }

    @Override
    public String peerName() {
        return io.peer();
    }

    @Override
    public int read(ByteBuffer dst) throws IOException {
        if (io.isClosed()) {
            throw new ClosedChannelException();
        }
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

    @Override
    public void write(ByteBuffer src) throws IOException {
        if (io.isClosed()) {
            throw new ClosedChannelException();
        }
        try {
            writer.write(src);
        } catch (IOException e) {
            throw failure(e, "write to");
        }
    }

    @Override
    public void sync() throws IOException {
        if (io.isClosed()) {
            throw new ClosedChannelException();
        }
        try {
            writer.sync();
        } catch (IOException e) {
            throw failure(e, "sync with");
        }
    }

    @Override
    public MemoryRegion register(ByteBuffer buffer, Set<Access> access) throws IOException {
        if (io.isClosed()) {
            throw new ClosedChannelException();
        }
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
        if (io.isClosed()) {
            throw new ClosedChannelException();
        }
        try {
            oneSided.put(src, remote, offset);
        } catch (IOException e) {
            throw failure(e, "put to");
        }
    }

    @Override
    public void get(RegionDescriptor remote, long offset, ByteBuffer dst) throws IOException {
        if (io.isClosed()) {
            throw new ClosedChannelException();
        }
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
            pipe = new StreamPipe(PIPE_BYTES, settings.busyPoll(), io.peer());
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
                f = new AsynchronousCloseException();
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

    /** Maps a failure of a channel call to what the contract promises. */
    private IOException failure(IOException e, String what) {
        if (e instanceof ClosedByInterruptException) {
            close();
            return e;
        }
        boolean closed = io.isClosed();
        if (closed || e instanceof ClosedChannelException) {
            if (closed && !(e instanceof AsynchronousCloseException)) {
                AsynchronousCloseException ace = new AsynchronousCloseException();
                ace.initCause(e);
                return ace;
            }
            return e;
        }
        if (e instanceof SocketTimeoutException || e instanceof CommunicatorException || e instanceof EOFException
                || e instanceof InterruptedIOException) {
            return e;
        }
        return new CommunicatorException(what + " " + io.peer() + " failed: " + e.getMessage(), e);
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
            if (writer.endStream() && readLock.tryLock()) {
                try {
                    io.discardInput();
                } catch (IOException e) {
                    LOG.debug("{}: discarding unread input from {} failed", endpoint, io.peer(), e);
                } finally {
                    readLock.unlock();
                }
            }
        } finally {
            io.close();
            memory.fail(new AsynchronousCloseException());
            memory.deregisterAll();
            StreamPipe p = pipe;
            if (p != null) {
                p.close();
            }
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
