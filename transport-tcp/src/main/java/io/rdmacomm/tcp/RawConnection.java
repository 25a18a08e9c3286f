package io.rdmacomm.tcp;

import io.rdmacomm.api.Access;
import io.rdmacomm.api.Endpoint;
import io.rdmacomm.api.MemoryRegion;
import io.rdmacomm.api.RegionDescriptor;
import io.rdmacomm.api.support.AbstractCommunicator;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.SocketChannel;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;

/**
 * One {@code wire=raw} connection: the socket carries the application's bytes and nothing else, as a GVirtuS
 * {@code TcpCommunicator} does. Writes are coalesced in a direct buffer of {@code sendBuffer} bytes that goes out on
 * {@code sync()} or when full; a write of at least {@code sendBuffer} bytes goes out with what was buffered in one
 * gathering write, uncopied. Reads go straight to the socket. As with framed connections ({@link FrameWriter}),
 * writes fill a small resident buffer first and move to one of {@code sendBuffer} bytes borrowed from the
 * process's {@link BufferPool} only when they need more; it goes back once sent, so an idle connection holds none.
 */
final class RawConnection implements AbstractCommunicator.Link {

    private final SocketIo io;
    private final Endpoint endpoint;
    private final Settings settings;
    private final ReentrantLock readLock = new ReentrantLock();
    private final ReentrantLock writeLock = new ReentrantLock();
    // owned by the holder of writeLock
    /** The buffer writes go to: {@link #idle}, or one borrowed from {@link #pool} (write mode). */
    private ByteBuffer send;
    private final ByteBuffer idle;
    private final BufferPool pool;
    private final ByteBuffer[] gather = new ByteBuffer[2];
    private boolean outputShut;
    private volatile boolean closing;

    private RawConnection(SocketIo io, Endpoint endpoint, Settings settings) {
        this.io = io;
        this.endpoint = endpoint;
        this.settings = settings;
        this.pool = BufferPool.of(settings.sendBuffer());
        this.idle = ByteBuffer.allocateDirect(Math.min(FrameWriter.IDLE_BYTES, settings.sendBuffer()));
        this.send = idle;
    }

    /** Takes over a connected channel (blocking or not, registered nowhere); closes it on failure. */
    static RawConnection open(SocketChannel channel, Endpoint endpoint, Settings settings) throws IOException {
        return new RawConnection(SocketIo.open(channel, null, settings), endpoint, settings);
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
        readLock.lock();
        try {
            return io.readSome(dst, settings.readTimeout());
        } catch (IOException e) {
            throw failure(e, "read from");
        } finally {
            readLock.unlock();
        }
    }

    @Override
    public void write(ByteBuffer src) throws IOException {
        writeLock.lock();
        try {
            checkOutput();
            if (src.remaining() >= pool.capacity()) {
                send.flip();
                gather[0] = send;
                gather[1] = src;
                try {
                    io.writeFully(gather, 0);
                } finally {
                    gather[1] = null;
                    send.clear();
                    toIdle();
                }
                return;
            }
            while (src.hasRemaining()) {
                if (src.remaining() > send.remaining() && send == idle && idle.capacity() < pool.capacity()) {
                    ByteBuffer big = pool.take();
                    big.put(idle.flip());
                    idle.clear();
                    send = big;
                }
                int n = Math.min(src.remaining(), send.remaining());
                send.put(send.position(), src, src.position(), n);
                send.position(send.position() + n);
                src.position(src.position() + n);
                if (!send.hasRemaining()) {
                    flush(0);
                }
            }
        } catch (IOException e) {
            throw failure(e, "write to");
        } finally {
            writeLock.unlock();
        }
    }

    @Override
    public void sync() throws IOException {
        writeLock.lock();
        try {
            checkOutput();
            flush(0);
        } catch (IOException e) {
            throw failure(e, "sync with");
        } finally {
            writeLock.unlock();
        }
    }

    @Override
    public MemoryRegion register(ByteBuffer buffer, Set<Access> access) {
        throw noRemoteMemory();
    }

    @Override
    public void put(ByteBuffer src, RegionDescriptor remote, long offset) {
        throw noRemoteMemory();
    }

    @Override
    public void get(RegionDescriptor remote, long offset, ByteBuffer dst) {
        throw noRemoteMemory();
    }

    private UnsupportedOperationException noRemoteMemory() {
        return new UnsupportedOperationException(endpoint + " uses wire=raw, a plain byte stream with no room for"
                + " remote-memory operations; leave wire=raw out (framed tcp://) or use rdma:// for register, put"
                + " and get");
    }

    private void checkOutput() throws ClosedChannelException {
        if (io.isClosed() || outputShut) {
            throw new ClosedChannelException();
        }
    }

    /** Sends everything buffered; {@code deadline} (nanoTime) bounds the wait when non-zero. */
    private void flush(long deadline) throws IOException {
        send.flip();
        try {
            io.writeFully(send, deadline);
        } finally {
            send.clear();
            toIdle();
        }
    }

    /** Gives a borrowed buffer back once it was sent (cleared). */
    private void toIdle() {
        ByteBuffer b = send;
        if (b != idle) {
            send = idle;
            pool.give(b);
        }
    }

    private IOException failure(IOException e, String what) {
        return io.failure(e, what, this::close);
    }

    /**
     * Unless another thread is writing, delivers what was written but not synced (within the read timeout, or a few
     * seconds) and shuts our direction down so the peer reads the end of the stream; unless another thread is
     * reading, reads away unread input so the kernel does not reset the connection; then closes the socket, which
     * ends every wait in it.
     */
    @Override
    public void close() {
        if (closing) {
            return;
        }
        closing = true;
        try {
            if (endStream()) {
                io.discardUnreadInput(readLock);
            }
        } finally {
            io.close();
        }
    }

    private boolean endStream() {
        try {
            if (!writeLock.tryLock(10, TimeUnit.MILLISECONDS)) {
                return false;
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
        try {
            if (!outputShut) {
                outputShut = true;
                io.endStream(send.position() > 0, this::flush);
            }
        } finally {
            writeLock.unlock();
        }
        return true;
    }
}
