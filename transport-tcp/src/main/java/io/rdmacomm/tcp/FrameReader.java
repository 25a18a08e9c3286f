package io.rdmacomm.tcp;

import io.rdmacomm.api.CommunicatorException;
import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * The receive side of a connection: takes frames apart, hands stream bytes to a reader (into its buffer, or read
 * straight from the socket when the buffer is large) and the frames of one-sided operations, decoded, to
 * {@link RemoteFrames}. Used by one thread at a time (the connection's read lock); until remote memory is first
 * used that is the application's reader, afterwards the progress thread ({@link #pump}).
 *
 * <p>Between frames, and whenever nothing is buffered, bytes arrive in a small resident buffer ({@value #IDLE_BYTES}
 * bytes), so a connection that waits for its next frame holds no large buffer; a frame that does not fit there
 * (or a DATA frame larger than it) moves to a receive buffer borrowed from the process's {@link BufferPool}, which
 * goes back once drained.
 */
final class FrameReader {
    /** {@link #readStream} returns this once the progress thread owns the socket. */
    static final int HANDED_OVER = Integer.MIN_VALUE;
    /** For the rest of a frame whose header arrived: a frame half read would lose the framing. */
    private static final long NO_TIMEOUT = 0;

    /**
     * The frames of one-sided operations as they arrive. A handler given this reader must {@link #receive} or
     * {@link #skip} the frame's {@code count} remaining bytes before it returns.
     */
    interface RemoteFrames {
        void onPut(long op, long key, long offset, int count, FrameReader in) throws IOException;

        void onGet(long op, long key, long offset, int count) throws IOException;

        void onGetResponse(long op, int count, FrameReader in) throws IOException;

        void onAck(long op);

        void onError(long op, String reason);
    }

    /** The resident buffer's size: small frames (requests, answers, heartbeats) never need more. */
    static final int IDLE_BYTES = 2048;

    private final SocketIo io;
    private final RemoteFrames remote;
    /** The buffer bytes arrive in: {@link #idle}, or one borrowed from {@link #pool} (read mode, flipped). */
    private ByteBuffer recv;
    private final ByteBuffer idle;
    /** Where receive buffers of the full size come from; its capacity bounds the frames read whole. */
    private final BufferPool pool;
    /** A stream read this large skips the receive buffer and reads the socket straight into the caller's buffer. */
    private final int directReadMin;
    private final Wire.Frame frame = new Wire.Frame();
    private int dataLeft;
    private boolean endOfStream;
    /** A protocol violation seen on the input; the framing is lost, so every later read fails with it. */
    private CommunicatorException broken;
    private volatile boolean handedOver;
    /** Bytes read from the socket so far, for the liveness thread; written by the one reading thread. */
    private volatile long received;

    FrameReader(SocketIo io, RemoteFrames remote, int receiveBytes) {
        this.io = io;
        this.remote = remote;
        this.pool = BufferPool.of(receiveBytes);
        this.idle = ByteBuffer.allocateDirect(Math.min(IDLE_BYTES, receiveBytes)).flip();
        this.recv = idle;
        this.directReadMin = receiveBytes / 2;
    }

    /** Bytes read from the socket so far. */
    long received() {
        return received;
    }

    /** From now on {@link #readStream} returns {@link #HANDED_OVER} instead of reading. */
    void handOver() {
        handedOver = true;
    }

    /**
     * Reads stream bytes into {@code dst} (which has space) in the caller's thread, serving any other frame it
     * meets; returns the count, -1 at a clean end of stream, or {@link #HANDED_OVER}.
     */
    int readStream(ByteBuffer dst, long timeout) throws IOException {
        try {
            if (broken != null) {
                throw new CommunicatorException("connection with " + io.peer() + " is unusable after a protocol"
                        + " violation: " + broken.getMessage(), broken);
            }
            return readDirect(dst, timeout);
        } catch (CommunicatorException e) {
            if (broken == null) {
                broken = e;
            }
            throw e;
        } finally {
            idleIfDrained();
        }
    }

    private int readDirect(ByteBuffer dst, long timeout) throws IOException {
        for (;;) {
            if (handedOver) {
                return HANDED_OVER;
            }
            if (dataLeft > 0) {
                if (recv.hasRemaining()) {
                    return takeData(dst);
                }
                if (dst.remaining() >= directReadMin) {
                    int limit = dst.limit();
                    dst.limit(dst.position() + Math.min(dst.remaining(), dataLeft));
                    int n;
                    try {
                        n = readSome(dst, timeout);
                    } finally {
                        dst.limit(limit);
                    }
                    if (n < 0) {
                        throw truncated();
                    }
                    dataLeft -= n;
                    return n;
                }
                growFor(dataLeft);
                if (fill(timeout) < 0) {
                    throw truncated();
                }
                continue;
            }
            if (endOfStream) {
                return -1;
            }
            if (!nextFrame(timeout)) {
                endOfStream = true;
                return -1;
            }
        }
    }

    /**
     * Stream bytes a read returns without waiting: those of the current DATA frame already buffered, -1 at a clean
     * end of stream, 0 if none, or {@link #HANDED_OVER}. When none is buffered, reads what the (non-blocking)
     * channel holds, without waiting, and serves the whole frames that are not DATA as {@link #readStream} does, up
     * to the next DATA frame's header; a frame not yet whole stays buffered for next time.
     *
     * <p>Only a frame other than DATA larger than the receive buffer is read whole with waits (the peer is in the
     * middle of it): before the hand-over only a misbehaving peer sends one, as PUT and GET_RESPONSE frames answer
     * remote memory this side used, which hands the socket over first.
     */
    int available() throws IOException {
        try {
            if (broken != null) {
                throw new CommunicatorException("connection with " + io.peer() + " is unusable after a protocol"
                        + " violation: " + broken.getMessage(), broken);
            }
            return availableNow();
        } catch (CommunicatorException e) {
            if (broken == null) {
                broken = e;
            }
            throw e;
        } finally {
            idleIfDrained();
        }
    }

    private int availableNow() throws IOException {
        for (;;) {
            if (handedOver) {
                return HANDED_OVER;
            }
            if (dataLeft > 0) {
                if (recv.hasRemaining()) {
                    return Math.min(dataLeft, recv.remaining());
                }
            } else if (endOfStream) {
                return -1;
            } else if (recv.remaining() >= Wire.HEADER_LENGTH) {
                Wire.Frame f = frame.wrap(recv, recv.position());
                if (wholeOrHopeless(f)) {
                    nextFrame(NO_TIMEOUT); // reads nothing more, but for a frame larger than the receive buffer
                    continue;
                }
                growFor(Wire.HEADER_LENGTH + f.payloadLength()); // a whole frame that does not fit the idle buffer
            }
            int n = readNowIntoRecv();
            if (n == 0) {
                return 0;
            }
            if (n < 0) {
                if (dataLeft == 0 && !recv.hasRemaining()) {
                    endOfStream = true;
                    return -1;
                }
                throw truncated();
            }
            if (dataLeft > recv.remaining() && recv == idle && recv.limit() == idle.capacity()) {
                readOnInFullBuffer();
            }
        }
    }

    /**
     * The middle of a large DATA frame filled the idle buffer: more of it is likely there, so reading goes on in a
     * full-size receive buffer rather than in idle-buffer pieces (a buffer is borrowed only once bytes came). An end
     * of stream here is seen again by the next read.
     */
    private void readOnInFullBuffer() throws IOException {
        growFor(dataLeft);
        readNowIntoRecv();
    }

    /** One read of the socket into {@link #recv} without waiting, counted: the bytes read, 0, or -1 at its end. */
    private int readNowIntoRecv() throws IOException {
        recv.compact();
        int n;
        try {
            n = io.readNow(recv);
        } finally {
            recv.flip();
        }
        if (n > 0) {
            received += n;
        }
        return n;
    }

    /**
     * Whether {@link #nextFrame} can take the frame whose header is buffered without waiting: a DATA header, a whole
     * frame, or one that is malformed (it throws); or one that can never be whole in the receive buffer.
     */
    private boolean wholeOrHopeless(Wire.Frame f) {
        byte type = f.type();
        int length = f.payloadLength();
        return type == Wire.DATA || !Wire.wellFormed(type, length)
                || length <= recv.remaining() - Wire.HEADER_LENGTH
                || length > pool.capacity() - Wire.HEADER_LENGTH;
    }

    /** Reads frames until the peer ends the stream, writing stream bytes into {@code pipe}; waits without limit. */
    void pump(StreamPipe pipe) throws IOException {
        if (endOfStream) {
            return;
        }
        for (;;) {
            if (dataLeft > 0) {
                if (!recv.hasRemaining()) {
                    growFor(dataLeft);
                    if (fill(NO_TIMEOUT) < 0) {
                        throw truncated();
                    }
                }
                dataLeft -= pipe.write(recv, Math.min(dataLeft, recv.remaining()));
            } else if (!nextFrame(NO_TIMEOUT)) {
                break;
            }
        }
        endOfStream = true;
    }

    /** Copies buffered bytes of the current DATA frame into {@code dst}. */
    private int takeData(ByteBuffer dst) {
        int n = Math.min(Math.min(dataLeft, recv.remaining()), dst.remaining());
        int limit = recv.limit();
        recv.limit(recv.position() + n);
        dst.put(recv);
        recv.limit(limit);
        dataLeft -= n;
        return n;
    }

    /**
     * Reads a frame's header and serves any frame but DATA whole; returns with {@link #dataLeft} set for a DATA
     * frame, or false at a clean end of stream.
     */
    private boolean nextFrame(long timeout) throws IOException {
        idleIfDrained(); // the wait for a frame's header, perhaps long, holds no large buffer
        if (!ensure(Wire.HEADER_LENGTH, timeout, true)) {
            return false;
        }
        Wire.Frame f = frame.wrap(recv, recv.position());
        byte type = f.type();
        int length = f.payloadLength();
        if (!Wire.wellFormed(type, length)) {
            throw new CommunicatorException("malformed frame from " + io.peer() + ": " + Wire.typeName(type)
                    + " with length " + Integer.toUnsignedString(length));
        }
        int decoded = Wire.decodedLength(type, length);
        ensure(decoded, NO_TIMEOUT, false);
        f.wrap(recv, recv.position());
        recv.position(recv.position() + decoded);
        switch (type) {
            case Wire.DATA -> dataLeft = length;
            case Wire.PUT -> remote.onPut(f.op(), f.key(), f.regionOffset(), length + Wire.HEADER_LENGTH
                    - Wire.PUT_LENGTH, this);
            case Wire.GET -> remote.onGet(f.op(), f.key(), f.regionOffset(), f.count());
            case Wire.GET_RESPONSE -> remote.onGetResponse(f.op(), length + Wire.HEADER_LENGTH - Wire.OP_LENGTH,
                    this);
            case Wire.ACK -> remote.onAck(f.op());
            case Wire.HEARTBEAT -> {
                // its arrival is all it says: received() has counted it
            }
            default -> remote.onError(f.op(), f.reason());
        }
        return true;
    }

    /**
     * Makes {@code n} bytes available in {@link #recv}; false if the stream ended cleanly before any of them
     * (only where {@code boundary} says a frame may end there).
     */
    private boolean ensure(int n, long timeout, boolean boundary) throws IOException {
        if (recv.remaining() < n) {
            growFor(n);
        }
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

    private int readSome(ByteBuffer b, long timeout) throws IOException {
        int n = io.readSome(b, timeout);
        if (n > 0) {
            received += n;
        }
        return n;
    }

    /** Moves the next {@code dst.remaining()} bytes of the current frame into {@code dst}. */
    void receive(ByteBuffer dst) throws IOException {
        while (dst.hasRemaining()) {
            if (recv.hasRemaining()) {
                int n = Math.min(recv.remaining(), dst.remaining());
                int limit = recv.limit();
                recv.limit(recv.position() + n);
                dst.put(recv);
                recv.limit(limit);
            } else if (dst.remaining() >= directReadMin) {
                if (readSome(dst, NO_TIMEOUT) < 0) {
                    throw truncated();
                }
            } else {
                growFor(dst.remaining());
                if (fill(NO_TIMEOUT) < 0) {
                    throw truncated();
                }
            }
        }
    }

    /** Drops the next {@code count} bytes of the current frame. */
    void skip(int count) throws IOException {
        int left = count;
        while (left > 0) {
            if (!recv.hasRemaining()) {
                growFor(left);
                if (fill(NO_TIMEOUT) < 0) {
                    throw truncated();
                }
            }
            int n = Math.min(left, recv.remaining());
            recv.position(recv.position() + n);
            left -= n;
        }
    }

    /**
     * Moves what is buffered from the idle buffer to a borrowed full-size one when {@code bytes} more are wanted
     * than the idle buffer holds; does nothing on a borrowed buffer.
     */
    private void growFor(int bytes) {
        if (recv != idle || bytes <= idle.capacity() || idle.capacity() == pool.capacity()) {
            return;
        }
        ByteBuffer big = pool.take();
        big.put(idle).flip();
        idle.clear().flip();
        recv = big;
    }

    /** Gives a borrowed buffer back once nothing is buffered in it; reading goes on in the idle buffer. */
    private void idleIfDrained() {
        ByteBuffer b = recv;
        if (b != idle && !b.hasRemaining()) {
            recv = idle;
            pool.give(b);
        }
    }

    /** Whether a borrowed receive buffer is held, for tests. */
    boolean holdsLargeBuffer() {
        return recv != idle;
    }

    private CommunicatorException truncated() {
        return new CommunicatorException("connection from " + io.peer() + " ended in the middle of a frame");
    }
}
