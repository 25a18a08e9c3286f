package io.rdmacomm.tcp;

import io.rdmacomm.api.Access;
import io.rdmacomm.api.CommunicatorException;
import io.rdmacomm.api.Endpoint;
import io.rdmacomm.api.MemoryRegion;
import io.rdmacomm.api.RegionDescriptor;
import java.io.EOFException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.channels.AsynchronousCloseException;
import java.nio.channels.ClosedByInterruptException;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.ClosedSelectorException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One handshaken connection: the framed byte stream and the emulated remote memory.
 *
 * <p>Until remote memory is first used, the application's reader reads the socket itself (no hand-off, no
 * extra thread on the latency path) and serves any remote-memory frame it meets. From then on the
 * "rdmacomm-tcp-progress" thread owns socket reads, serves remote-memory frames at once and passes stream bytes
 * to {@code read} through a bounded {@link StreamPipe}.
 *
 * <p>With neither a read timeout nor busy polling the channel stays in blocking mode, the cheapest wait; otherwise
 * it is non-blocking and waits on one selector per direction, so a reader and a writer never share one.
 */
final class TcpConnection {
    private static final Logger LOG = LoggerFactory.getLogger(TcpConnection.class);
    /** For selects that only wait: the selected-key set is left alone, so a wait allocates nothing. */
    private static final Consumer<SelectionKey> JUST_WAKE = k -> { };
    private static final long CLOSE_DELIVERY_DEFAULT = TimeUnit.SECONDS.toNanos(3);
    private static final int RECEIVE_BUFFER_MIN = 64 * 1024;
    private static final int RECEIVE_BUFFER_MAX = 1024 * 1024;
    private static final int PIPE_BYTES = 256 * 1024;
    private static final long NO_TIMEOUT = 0;

    private final SocketChannel channel;
    private final Endpoint endpoint;
    private final Settings settings;
    private final String peer;
    private final boolean blocking;
    private final Selector readSelector;
    private final Selector writeSelector;
    private final ReentrantLock readLock = new ReentrantLock();
    private final ReentrantLock writeLock = new ReentrantLock();
    private final Object progressLock = new Object();
    /** Set when close starts. */
    private volatile boolean closing;
    /**
     * Set once close has delivered what it could, just before the channel closes: calls made from then on fail
     * with ClosedChannelException, calls still waiting end with AsynchronousCloseException.
     */
    private volatile boolean closed;

    // receive side, owned by the holder of readLock
    private final ByteBuffer recv;
    private final int directReadMin;
    private int dataLeft;
    private boolean endOfStream;
    /** A protocol violation seen on the input; the framing is lost, so every later read fails with it. */
    private CommunicatorException broken;

    // send side, owned by the holder of writeLock
    private final ByteBuffer send;
    private final int coalesceLimit;
    private final ByteBuffer header = ByteBuffer.allocateDirect(Wire.HEADER_BYTES + Wire.PUT_PREFIX);
    private final ByteBuffer[] gather = new ByteBuffer[3];
    private int openFrame = -1;
    private boolean outputShut;

    private final RemoteMemory memory;
    private volatile StreamPipe pipe;
    private Thread progress;

    private TcpConnection(SocketChannel channel, Endpoint endpoint, Settings settings, String peer,
            Selector readSelector, Selector writeSelector) {
        this.channel = channel;
        this.endpoint = endpoint;
        this.settings = settings;
        this.peer = peer;
        this.blocking = readSelector == null;
        this.readSelector = readSelector;
        this.writeSelector = writeSelector;
        int recvBytes = Math.max(RECEIVE_BUFFER_MIN, Math.min(settings.sendBuffer(), RECEIVE_BUFFER_MAX))
                + Wire.HEADER_BYTES;
        this.recv = ByteBuffer.allocateDirect(recvBytes).flip();
        this.directReadMin = recvBytes / 2;
        this.coalesceLimit = settings.sendBuffer();
        this.send = ByteBuffer.allocateDirect(Math.max(settings.sendBuffer() + Wire.HEADER_BYTES, 64));
        this.memory = new RemoteMemory(peer, settings.maxRegistered());
    }

    /** Takes over a handshaken channel (blocking or not, registered nowhere); closes it on failure. */
    static TcpConnection open(SocketChannel channel, Endpoint endpoint, Settings settings) throws IOException {
        Selector readSelector = null;
        Selector writeSelector = null;
        try {
            String peer = describe(channel.getRemoteAddress());
            if (settings.blockingChannel()) {
                channel.configureBlocking(true);
            } else {
                channel.configureBlocking(false);
                readSelector = Selector.open();
                writeSelector = Selector.open();
                channel.register(readSelector, SelectionKey.OP_READ);
                channel.register(writeSelector, SelectionKey.OP_WRITE);
            }
            return new TcpConnection(channel, endpoint, settings, peer, readSelector, writeSelector);
        } catch (IOException | RuntimeException e) {
            TcpServer.closeQuietly(channel);
            if (readSelector != null) {
                TcpServer.closeQuietly(readSelector);
            }
            if (writeSelector != null) {
                TcpServer.closeQuietly(writeSelector);
            }
            throw e;
        }
    }

    static String describe(SocketAddress address) {
        if (address instanceof InetSocketAddress a && a.getAddress() != null) {
            String host = a.getAddress().getHostAddress();
            return (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + a.getPort();
        }
        return String.valueOf(address);
    }

    String peer() {
        return peer;
    }

    // ---- stream: read ----------------------------------------------------------------------------------------

    int read(ByteBuffer dst) throws IOException {
        if (closed) {
            throw new ClosedChannelException();
        }
        if (!dst.hasRemaining()) {
            return 0;
        }
        StreamPipe p = pipe;
        if (p == null) {
            readLock.lock();
            try {
                if (broken != null) {
                    throw new CommunicatorException("connection with " + peer + " is unusable after a protocol"
                            + " violation: " + broken.getMessage(), broken);
                }
                int n = readDirect(dst);
                if (n != Integer.MIN_VALUE) {
                    return n;
                }
            } catch (CommunicatorException e) {
                if (broken == null) {
                    broken = e;
                }
                throw e;
            } catch (IOException e) {
                throw failure(e, "read from");
            } finally {
                readLock.unlock();
            }
            p = pipe;
        }
        return p.read(dst, settings.readTimeout(), peer);
    }

    /** Reads the socket in the caller's thread; {@code Integer.MIN_VALUE} once the progress thread took over. */
    private int readDirect(ByteBuffer dst) throws IOException {
        for (;;) {
            if (pipe != null) {
                return Integer.MIN_VALUE;
            }
            if (dataLeft > 0) {
                if (recv.hasRemaining()) {
                    return takeData(dst, dst.remaining());
                }
                if (dst.remaining() >= directReadMin) {
                    int limit = dst.limit();
                    dst.limit(dst.position() + Math.min(dst.remaining(), dataLeft));
                    int n;
                    try {
                        n = readSome(dst, settings.readTimeout());
                    } finally {
                        dst.limit(limit);
                    }
                    if (n < 0) {
                        throw truncated();
                    }
                    dataLeft -= n;
                    return n;
                }
                if (fill(settings.readTimeout()) < 0) {
                    throw truncated();
                }
                continue;
            }
            if (endOfStream) {
                return -1;
            }
            if (!nextFrame(settings.readTimeout())) {
                endOfStream = true;
                return -1;
            }
        }
    }

    /** Copies up to {@code max} buffered bytes of the current DATA frame into {@code dst}. */
    private int takeData(ByteBuffer dst, int max) {
        int n = Math.min(Math.min(dataLeft, recv.remaining()), Math.min(dst.remaining(), max));
        int limit = recv.limit();
        recv.limit(recv.position() + n);
        dst.put(recv);
        recv.limit(limit);
        dataLeft -= n;
        return n;
    }

    /**
     * Reads a frame header, serving remote-memory frames whole; returns with {@link #dataLeft} set for a DATA
     * frame, or false at a clean end of stream.
     */
    private boolean nextFrame(long timeout) throws IOException {
        if (!ensure(Wire.HEADER_BYTES, timeout, true)) {
            return false;
        }
        byte type = recv.get();
        int length = recv.getInt();
        if (type == Wire.DATA) {
            if (length <= 0) {
                throw malformed(type, length);
            }
            dataLeft = length;
        } else {
            serve(type, length); // no timeout inside: a frame half read would lose the framing
        }
        return true;
    }

    /**
     * Makes {@code n} bytes available in {@link #recv}; false if the stream ended cleanly before any of them
     * (only where {@code boundary} says a frame may end there).
     */
    private boolean ensure(int n, long timeout, boolean boundary) throws IOException {
        while (recv.remaining() < n) {
            if (fill(timeout) < 0) {
                if (boundary && !recv.hasRemaining()) {
                    return false;
                }
                throw truncated();
            }
        }
        return true;
    }

    private int fill(long timeout) throws IOException {
        recv.compact();
        try {
            return readSome(recv, timeout);
        } finally {
            recv.flip();
        }
    }

    /** One channel read of at least one byte into {@code b} (which has space), or -1 at end of stream. */
    private int readSome(ByteBuffer b, long timeout) throws IOException {
        if (blocking) {
            return channel.read(b);
        }
        int n = channel.read(b);
        if (n != 0) {
            return n;
        }
        if (settings.busyPoll() > 0) {
            long spinEnd = System.nanoTime() + settings.busyPoll();
            do {
                Thread.onSpinWait();
                n = channel.read(b);
                if (n != 0) {
                    return n;
                }
            } while (System.nanoTime() - spinEnd < 0);
        }
        long deadline = System.nanoTime() + timeout;
        for (;;) {
            long waitMillis = 0;
            if (timeout > 0) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    throw new SocketTimeoutException("read from " + peer + " timed out after "
                            + Settings.format(timeout) + " (readTimeout)");
                }
                waitMillis = TimeUnit.NANOSECONDS.toMillis(left) + 1;
            }
            await(readSelector, waitMillis);
            n = channel.read(b);
            if (n != 0) {
                return n;
            }
        }
    }

    /** Waits on a selector; returns how many keys became ready (0 when the wait timed out). */
    private int await(Selector selector, long millis) throws IOException {
        if (closed) {
            throw new AsynchronousCloseException();
        }
        int ready;
        try {
            ready = selector.select(JUST_WAKE, millis);
        } catch (ClosedSelectorException e) {
            throw new AsynchronousCloseException();
        }
        if (closed) {
            throw new AsynchronousCloseException();
        }
        return ready;
    }

    private CommunicatorException truncated() {
        return new CommunicatorException("connection from " + peer + " ended in the middle of a frame");
    }

    private CommunicatorException malformed(byte type, int length) {
        return new CommunicatorException("malformed frame from " + peer + ": " + Wire.typeName(type) + " with length "
                + Integer.toUnsignedString(length));
    }

    // ---- stream: write ---------------------------------------------------------------------------------------

    void write(ByteBuffer src) throws IOException {
        if (closed) {
            throw new ClosedChannelException();
        }
        writeLock.lock();
        try {
            checkOutput();
            while (src.hasRemaining()) {
                int r = src.remaining();
                if (r >= coalesceLimit) {
                    header.clear();
                    header.put(Wire.DATA).putInt(r);
                    writeFrame(src);
                    continue;
                }
                if (openFrame < 0) {
                    if (send.remaining() <= Wire.HEADER_BYTES) {
                        flush(0);
                    }
                    openFrame = send.position();
                    send.put(Wire.DATA).putInt(0);
                }
                int n = Math.min(r, send.remaining());
                int limit = src.limit();
                src.limit(src.position() + n);
                send.put(src);
                src.limit(limit);
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

    void sync() throws IOException {
        if (closed) {
            throw new ClosedChannelException();
        }
        writeLock.lock();
        try {
            checkOutput();
            if (send.position() > 0) {
                flush(0);
            }
        } catch (IOException e) {
            throw failure(e, "sync with");
        } finally {
            writeLock.unlock();
        }
    }

    private void checkOutput() throws IOException {
        if (outputShut) {
            throw new ClosedChannelException();
        }
    }

    private void closeFrame() {
        if (openFrame >= 0) {
            send.putInt(openFrame + 1, send.position() - openFrame - Wire.HEADER_BYTES);
            openFrame = -1;
        }
    }

    /** Sends everything buffered; {@code deadline} (nanoTime) bounds the wait when non-zero. */
    private void flush(long deadline) throws IOException {
        closeFrame();
        send.flip();
        try {
            while (send.hasRemaining()) {
                if (channel.write(send) == 0) {
                    awaitWritable(deadline);
                }
            }
        } finally {
            send.clear();
        }
    }

    /**
     * Sends what is buffered, then one frame whose header the caller put in {@link #header} and whose last
     * {@code payload.remaining()} bytes are {@code payload}, in one gathering write; the payload is not copied.
     */
    private void writeFrame(ByteBuffer payload) throws IOException {
        header.flip();
        closeFrame();
        send.flip();
        gather[0] = send;
        gather[1] = header;
        gather[2] = payload;
        try {
            while (header.hasRemaining() || payload.hasRemaining()) {
                if (channel.write(gather) == 0) {
                    awaitWritable(0);
                }
            }
        } finally {
            gather[2] = null;
            send.clear();
            header.clear();
        }
    }

    /**
     * Waits until the (non-blocking) channel takes bytes again: at most {@code readTimeout}, or until
     * {@code deadline} (nanoTime) when that is non-zero.
     */
    private void awaitWritable(long deadline) throws IOException {
        long limit = deadline != 0 ? deadline - System.nanoTime() : settings.readTimeout();
        long waitMillis = 0;
        if (deadline != 0 || limit > 0) {
            if (limit <= 0) {
                throw writeTimedOut(deadline);
            }
            waitMillis = TimeUnit.NANOSECONDS.toMillis(limit) + 1;
        }
        if (await(writeSelector, waitMillis) == 0 && waitMillis > 0) {
            throw writeTimedOut(deadline);
        }
    }

    private SocketTimeoutException writeTimedOut(long deadline) {
        return new SocketTimeoutException("write to " + peer + " timed out: the peer took no bytes for "
                + (deadline != 0 ? "the close delivery time" : Settings.format(settings.readTimeout())
                        + " (readTimeout)"));
    }

    /** Maps a failure of a channel call to what the contract promises. */
    private IOException failure(IOException e, String what) {
        if (e instanceof ClosedByInterruptException) {
            close();
            return e;
        }
        if (closed || e instanceof ClosedChannelException) {
            if (closed && !(e instanceof AsynchronousCloseException)) {
                AsynchronousCloseException ace = new AsynchronousCloseException();
                ace.initCause(e);
                return ace;
            }
            return e;
        }
        if (e instanceof SocketTimeoutException || e instanceof CommunicatorException || e instanceof EOFException
                || e instanceof java.io.InterruptedIOException) {
            return e;
        }
        return new CommunicatorException(what + " " + peer + " failed: " + e.getMessage(), e);
    }

    // ---- remote memory: the target's and the initiator's frames ----------------------------------------------

    /** Serves one remote-memory frame whose header has just been read. */
    private void serve(byte type, int length) throws IOException {
        switch (type) {
            case Wire.PUT -> {
                if (length < Wire.PUT_PREFIX) {
                    throw malformed(type, length);
                }
                ensure(Wire.PUT_PREFIX, NO_TIMEOUT, false);
                long op = recv.getLong();
                long key = recv.getLong();
                long offset = recv.getLong();
                int count = length - Wire.PUT_PREFIX;
                String refused = memory.refusal(key, offset, count, Access.REMOTE_WRITE);
                ByteBuffer target = refused == null ? memory.window(key, offset, count) : null;
                if (refused == null && target == null) {
                    refused = "region with key " + Long.toHexString(key) + " was deregistered";
                }
                if (target != null) {
                    receive(target, NO_TIMEOUT);
                } else {
                    skip(count, NO_TIMEOUT);
                }
                answer(refused == null ? Wire.ACK : Wire.ERROR, op, refused);
            }
            case Wire.GET -> {
                if (length != Wire.GET_BYTES) {
                    throw malformed(type, length);
                }
                ensure(Wire.GET_BYTES, NO_TIMEOUT, false);
                long op = recv.getLong();
                long key = recv.getLong();
                long offset = recv.getLong();
                int count = recv.getInt();
                String refused = memory.refusal(key, offset, count, Access.REMOTE_READ);
                ByteBuffer source = refused == null ? memory.window(key, offset, count) : null;
                if (source != null) {
                    answerGet(op, source);
                } else {
                    answer(Wire.ERROR, op, refused != null ? refused
                            : "region with key " + Long.toHexString(key) + " was deregistered");
                }
            }
            case Wire.GET_RESPONSE -> {
                if (length < Wire.OP_BYTES) {
                    throw malformed(type, length);
                }
                ensure(Wire.OP_BYTES, NO_TIMEOUT, false);
                RemoteMemory.Op op = memory.claim(recv.getLong());
                int count = length - Wire.OP_BYTES;
                if (op == null) {
                    skip(count, NO_TIMEOUT); // its caller gave up waiting
                } else if (count != op.dst.remaining()) {
                    skip(count, NO_TIMEOUT);
                    op.finish(null, new CommunicatorException("the peer answered with " + count + " bytes, "
                            + op.dst.remaining() + " were asked for"));
                } else {
                    try {
                        receive(op.dst, NO_TIMEOUT);
                    } catch (IOException e) {
                        op.finish(null, e);
                        throw e;
                    }
                    op.finish(null, null);
                }
            }
            case Wire.ACK -> {
                if (length != Wire.OP_BYTES) {
                    throw malformed(type, length);
                }
                ensure(Wire.OP_BYTES, NO_TIMEOUT, false);
                RemoteMemory.Op op = memory.claim(recv.getLong());
                if (op != null) {
                    op.finish(null, null);
                }
            }
            case Wire.ERROR -> {
                if (length < Wire.OP_BYTES || length > Wire.MAX_ERROR_BYTES) {
                    throw malformed(type, length);
                }
                ensure(length, NO_TIMEOUT, false);
                RemoteMemory.Op op = memory.claim(recv.getLong());
                byte[] reason = new byte[length - Wire.OP_BYTES];
                recv.get(reason);
                if (op != null) {
                    op.finish(new String(reason, StandardCharsets.UTF_8), null);
                }
            }
            default -> throw malformed(type, length);
        }
    }

    /** Moves the next {@code dst.remaining()} bytes of the current frame into {@code dst}. */
    private void receive(ByteBuffer dst, long timeout) throws IOException {
        while (dst.hasRemaining()) {
            if (recv.hasRemaining()) {
                int n = Math.min(recv.remaining(), dst.remaining());
                int limit = recv.limit();
                recv.limit(recv.position() + n);
                dst.put(recv);
                recv.limit(limit);
            } else if (dst.remaining() >= directReadMin) {
                if (readSome(dst, timeout) < 0) {
                    throw truncated();
                }
            } else if (fill(timeout) < 0) {
                throw truncated();
            }
        }
    }

    private void skip(int count, long timeout) throws IOException {
        int left = count;
        while (left > 0) {
            if (!recv.hasRemaining() && fill(timeout) < 0) {
                throw truncated();
            }
            int n = Math.min(left, recv.remaining());
            recv.position(recv.position() + n);
            left -= n;
        }
    }

    /** Sends an ACK or ERROR for operation {@code op}. */
    private void answer(byte type, long op, String reason) throws IOException {
        writeLock.lock();
        try {
            if (outputShut) {
                return; // this side is closing; the initiator learns so from the end of the stream
            }
            byte[] text = reason == null ? new byte[0] : reason.getBytes(StandardCharsets.UTF_8);
            int room = Math.min(Wire.MAX_ERROR_BYTES, send.capacity() - Wire.HEADER_BYTES) - Wire.OP_BYTES;
            int textBytes = Math.min(text.length, room);
            closeFrame();
            if (send.remaining() < Wire.HEADER_BYTES + Wire.OP_BYTES + textBytes) {
                flush(0);
            }
            send.put(type).putInt(Wire.OP_BYTES + textBytes).putLong(op).put(text, 0, textBytes);
            flush(0);
        } finally {
            writeLock.unlock();
        }
    }

    private void answerGet(long op, ByteBuffer source) throws IOException {
        writeLock.lock();
        try {
            if (outputShut) {
                return;
            }
            header.clear();
            header.put(Wire.GET_RESPONSE).putInt(Wire.OP_BYTES + source.remaining()).putLong(op);
            writeFrame(source);
        } finally {
            writeLock.unlock();
        }
    }

    MemoryRegion register(ByteBuffer buffer, Set<Access> access) throws IOException {
        if (closed) {
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

    void put(ByteBuffer src, RegionDescriptor remote, long offset) throws IOException {
        if (closed) {
            throw new ClosedChannelException();
        }
        int count = src.remaining();
        remote.checkAccess(offset, count, Access.REMOTE_WRITE);
        long key = RemoteMemory.keyOf(remote);
        if (count > Integer.MAX_VALUE - Wire.PUT_PREFIX) {
            throw new IllegalArgumentException("a put carries at most " + (Integer.MAX_VALUE - Wire.PUT_PREFIX)
                    + " bytes, got " + count);
        }
        startProgress();
        RemoteMemory.Op op = memory.begin(null);
        writeLock.lock();
        try {
            checkOutput();
            header.clear();
            header.put(Wire.PUT).putInt(Wire.PUT_PREFIX + count).putLong(op.id).putLong(key).putLong(offset);
            writeFrame(src);
        } catch (IOException e) {
            memory.claim(op.id);
            throw failure(e, "put to");
        } finally {
            writeLock.unlock();
        }
        op.await(settings.readTimeout(), "put of " + count + " bytes at offset " + offset + " of region " + remote);
    }

    void get(RegionDescriptor remote, long offset, ByteBuffer dst) throws IOException {
        if (closed) {
            throw new ClosedChannelException();
        }
        int count = dst.remaining();
        remote.checkAccess(offset, count, Access.REMOTE_READ);
        long key = RemoteMemory.keyOf(remote);
        if (dst.isReadOnly()) {
            throw new IllegalArgumentException("get into a read-only buffer");
        }
        startProgress();
        RemoteMemory.Op op = memory.begin(dst);
        writeLock.lock();
        try {
            checkOutput();
            closeFrame();
            if (send.remaining() < Wire.HEADER_BYTES + Wire.GET_BYTES) {
                flush(0);
            }
            send.put(Wire.GET).putInt(Wire.GET_BYTES).putLong(op.id).putLong(key).putLong(offset).putInt(count);
            flush(0);
        } catch (IOException e) {
            memory.claim(op.id);
            throw failure(e, "get from");
        } finally {
            writeLock.unlock();
        }
        op.await(settings.readTimeout(), "get of " + count + " bytes at offset " + offset + " of region " + remote);
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
            Thread t = new Thread(this::progressLoop, "rdmacomm-tcp-progress");
            t.setDaemon(true);
            progress = t;
            pipe = new StreamPipe(PIPE_BYTES);
            t.start();
        }
    }

    private void progressLoop() {
        StreamPipe p = pipe;
        readLock.lock(); // waits for an application read still on the socket to step aside
        try {
            if (!endOfStream) {
                for (;;) {
                    if (dataLeft > 0) {
                        if (!recv.hasRemaining() && fill(0) < 0) {
                            throw truncated();
                        }
                        dataLeft -= p.write(recv, Math.min(dataLeft, recv.remaining()));
                    } else if (!nextFrame(0)) {
                        break;
                    }
                }
                endOfStream = true;
            }
            p.finish();
            memory.fail(new EOFException(peer + " closed the connection"));
        } catch (IOException | RuntimeException e) {
            IOException f;
            if (closed) {
                f = new AsynchronousCloseException();
            } else {
                f = e instanceof IOException io ? failure(io, "reading from")
                        : new CommunicatorException("reading from " + peer + " failed: " + e, e);
                LOG.warn("{}: connection with {} failed", endpoint, peer, e);
            }
            p.fail(f);
            memory.fail(f);
        } finally {
            readLock.unlock();
        }
    }

    // ---- close -----------------------------------------------------------------------------------------------

    void close() {
        synchronized (progressLock) {
            if (closing) {
                return;
            }
            closing = true;
        }
        boolean writer = false;
        try {
            writer = writeLock.tryLock(10, TimeUnit.MILLISECONDS);
            if (writer) {
                deliverAndEndStream();
                if (readLock.tryLock()) {
                    try {
                        discardInput();
                    } finally {
                        readLock.unlock();
                    }
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            closed = true;
            TcpServer.closeQuietly(channel);
            if (readSelector != null) {
                TcpServer.closeQuietly(readSelector);
                TcpServer.closeQuietly(writeSelector);
            }
            memory.fail(new AsynchronousCloseException());
            memory.deregisterAll();
            StreamPipe p = pipe;
            if (p != null) {
                p.close();
            }
            if (writer) {
                writeLock.unlock();
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

    /** Tries to send what was written but not synced, then ends the stream so the peer reads -1. */
    private void deliverAndEndStream() {
        if (outputShut) {
            return;
        }
        outputShut = true;
        long budget = settings.readTimeout() > 0 ? settings.readTimeout() : CLOSE_DELIVERY_DEFAULT;
        try {
            if (send.position() > 0) {
                if (blocking) {
                    flushGuarded(budget);
                } else {
                    flush(System.nanoTime() + budget);
                }
            }
            channel.shutdownOutput();
        } catch (IOException e) {
            LOG.debug("{}: bytes written to {} before close could not be delivered", endpoint, peer, e);
        }
    }

    /** A blocking write cannot time out, so a watchdog closes the channel if the peer takes too long. */
    private void flushGuarded(long budget) throws IOException {
        CountDownLatch delivered = new CountDownLatch(1);
        Thread watchdog = new Thread(() -> {
            try {
                if (!delivered.await(budget, TimeUnit.NANOSECONDS)) {
                    TcpServer.closeQuietly(channel);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "rdmacomm-tcp-close-watchdog");
        watchdog.setDaemon(true);
        watchdog.start();
        try {
            flush(0);
        } finally {
            delivered.countDown();
            join(watchdog);
        }
    }

    /**
     * Reads away bytes the peer sent that nobody will read: closing a socket with unread input makes the kernel
     * reset the connection, and the peer could lose the end of our stream.
     */
    private void discardInput() {
        try {
            if (blocking) {
                channel.configureBlocking(false);
            }
            ByteBuffer scratch = ByteBuffer.allocate(64 * 1024);
            for (int i = 0; i < 16 && channel.read(scratch) > 0; i++) {
                scratch.clear();
            }
        } catch (IOException e) {
            LOG.debug("{}: discarding unread input from {} failed", endpoint, peer, e);
        }
    }

    private static void join(Thread t) {
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
