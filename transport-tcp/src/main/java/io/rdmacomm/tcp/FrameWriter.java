package io.rdmacomm.tcp;

import io.rdmacomm.api.support.Utf8;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The send side of a connection: every frame goes out here, under one lock. Small stream writes are coalesced
 * into one DATA frame in a direct buffer that goes out on {@link #sync()} or when full; a write of at least
 * {@code sendBuffer} bytes, a PUT's bytes and a GET_RESPONSE's bytes go out in one gathering write with what was
 * buffered and their header, without being copied.
 *
 * <p>Writes are buffered in a small resident buffer ({@value #IDLE_BYTES} bytes) until they need more; then what it
 * holds moves to a buffer of {@code sendBuffer} bytes borrowed from the process's {@link BufferPool}, which goes back
 * as soon as it is sent, so an idle connection holds no large buffer. What goes out, and when, does not change.
 */
final class FrameWriter {

    private final SocketIo io;
    private final Settings settings;
    private final ReentrantLock lock = new ReentrantLock();
    // owned by the holder of the lock
    /** The buffer writes go to: {@link #idle}, or one borrowed from {@link #pool} (write mode). */
    private ByteBuffer send;
    private final ByteBuffer idle;
    private final BufferPool pool;
    private final int coalesceLimit;
    private final ByteBuffer header = ByteBuffer.allocateDirect(Wire.PUT_LENGTH);
    private final ByteBuffer[] gather = new ByteBuffer[3];
    private final Wire.Frame frame = new Wire.Frame();
    /** Where the DATA frame that writes are filling starts in {@link #send}, or -1. */
    private int openFrame = -1;
    private boolean outputShut;
    /** Whether {@link #send} holds bytes tryWrite took that must leave without a further call; under the lock. */
    private boolean owed;
    /** Set on the readiness thread when the socket takes bytes again; whoever holds or next frees the lock drains. */
    private volatile boolean flushWanted;
    private final Runnable onWritable = this::writable;
    /** tryWrite's gathering write: a frame header and the buffers it sends; grows to the most buffers asked for. */
    private ByteBuffer[] tryGather = new ByteBuffer[8];
    private final ByteBuffer[] one = new ByteBuffer[1];

    FrameWriter(SocketIo io, Settings settings) {
        this.io = io;
        this.settings = settings;
        this.coalesceLimit = settings.sendBuffer();
        this.pool = BufferPool.of(Math.max(settings.sendBuffer() + Wire.HEADER_LENGTH, 64));
        this.idle = ByteBuffer.allocateDirect(Math.min(IDLE_BYTES, pool.capacity()));
        this.send = idle;
    }

    /** The resident buffer's size: a small write and its frame header, or an ERROR frame, fit. */
    static final int IDLE_BYTES = 2048;

    void write(ByteBuffer src) throws IOException {
        lock.lock();
        try {
            checkOutput();
            while (src.hasRemaining()) {
                int r = src.remaining();
                if (r >= coalesceLimit) {
                    header.clear().limit(frame.wrap(header, 0).data(r));
                    writeFrame(src);
                    continue;
                }
                if (openFrame < 0) {
                    if (send.remaining() <= Wire.HEADER_LENGTH) {
                        flush(0);
                    }
                    openFrame = send.position();
                    send.position(openFrame + frame.wrap(send, openFrame).data(0));
                }
                if (r > send.remaining()) {
                    grow();
                }
                copy(src, Math.min(r, send.remaining()));
                if (!send.hasRemaining()) {
                    flush(0);
                }
            }
        } finally {
            unlock();
        }
    }

    /**
     * Turns the connection's blocking channel non-blocking for tryWrite, unless a writer holds the lock: every write
     * on the channel happens under it, and switching the mode waits for a channel write in progress. The caller
     * holds the read lock, so no read is in progress either. Returns false if a writer is busy.
     */
    boolean tryMakeNonBlocking() throws IOException {
        if (!lock.tryLock()) {
            return false;
        }
        try {
            io.makeNonBlocking();
            return true;
        } finally {
            unlock();
        }
    }

    /** {@link #tryWrite(ByteBuffer[], int, int)} of one buffer. */
    int tryWrite(ByteBuffer src) throws IOException {
        if (!lock.tryLock()) {
            return 0;
        }
        try {
            one[0] = src;
            return (int) tryWriteLocked(one, 0, 1);
        } finally {
            one[0] = null;
            unlock();
        }
    }

    /**
     * Sends what the non-blocking plain socket takes now of the buffers, in DATA frames, without waiting: bytes it
     * took in part of a frame are owed (see the class comment). Returns the bytes taken from the buffers, 0 if the
     * socket takes nothing now, bytes are still owed, or another thread writes.
     */
    long tryWrite(ByteBuffer[] srcs, int offset, int length) throws IOException {
        if (!lock.tryLock()) {
            return 0;
        }
        try {
            return tryWriteLocked(srcs, offset, length);
        } finally {
            unlock();
        }
    }

    private long tryWriteLocked(ByteBuffer[] srcs, int offset, int length) throws IOException {
        checkOutput();
        if (send.position() > 0 && !drainNow()) {
            return 0;
        }
        int maxFrame = pool.capacity() - Wire.HEADER_LENGTH;
        int end = offset + length;
        int i = offset;
        long taken = 0;
        for (;;) {
            while (i < end && !srcs[i].hasRemaining()) {
                i++;
            }
            if (i == end) {
                return taken;
            }
            // the frame: srcs[i..last], the last one cut to its first lastBytes
            int total = 0;
            int last = i;
            int lastBytes = 0;
            for (int j = i; j < end && total < maxFrame; j++) {
                int r = Math.min(srcs[j].remaining(), maxFrame - total);
                if (r > 0) {
                    total += r;
                    last = j;
                    lastBytes = r;
                }
            }
            if (Wire.HEADER_LENGTH + total <= send.remaining()) {
                // small: copied into the (empty) send buffer and sent from there in one write
                send.position(frame.wrap(send, 0).data(total));
                for (int j = i; j <= last; j++) {
                    copy(srcs[j], j == last ? lastBytes : srcs[j].remaining());
                }
                taken += total;
                if (!drainNow()) {
                    owe();
                    return taken;
                }
                i = last;
                continue;
            }
            int count = last - i + 2;
            if (tryGather.length < count) {
                tryGather = new ByteBuffer[Math.max(count, 2 * tryGather.length)];
            }
            header.clear().limit(frame.wrap(header, 0).data(total));
            tryGather[0] = header;
            System.arraycopy(srcs, i, tryGather, 1, count - 1);
            ByteBuffer cut = srcs[last];
            int cutLimit = cut.limit();
            cut.limit(cut.position() + lastBytes);
            long n;
            try {
                n = io.writeNow(tryGather, 0, count);
                if (n > 0 && n < Wire.HEADER_LENGTH + total) {
                    // the frame is committed: its tail is owed, copied in order
                    grow();
                    send.put(header);
                    for (int j = 1; j < count; j++) {
                        send.put(tryGather[j]);
                    }
                }
            } finally {
                cut.limit(cutLimit);
                Arrays.fill(tryGather, 0, count, null);
                header.clear();
            }
            if (n == 0) {
                return taken;
            }
            taken += total;
            if (send.position() > 0) {
                owe();
                return taken;
            }
            i = last;
        }
    }

    /** Copies {@code count} bytes of {@code src} into {@link #send}. */
    private void copy(ByteBuffer src, int count) {
        int limit = src.limit();
        src.limit(src.position() + count);
        send.put(src);
        src.limit(limit);
    }

    /**
     * Sends what {@link #send} holds, as far as the socket takes it now; true if nothing is left. Under the lock, on
     * a non-blocking plain channel.
     */
    private boolean drainNow() throws IOException {
        closeFrame();
        writeBufferedNow();
        if (send.position() > 0) {
            return false;
        }
        owed = false;
        toIdle();
        return true;
    }

    /** Sends what {@link #send} holds as far as the socket takes it now; the rest stays buffered, in order. */
    private void writeBufferedNow() throws IOException {
        send.flip();
        try {
            io.writeNow(send);
        } finally {
            send.compact();
        }
    }

    /** Marks what {@link #send} holds as owed and asks the readiness thread to say when the socket takes more. */
    private void owe() throws IOException {
        owed = true;
        io.armWritable(onWritable);
    }

    /** On the readiness thread: the socket takes bytes again. Never blocks nor throws. */
    private void writable() {
        flushWanted = true;
        drainIfFree();
    }

    /**
     * Sends owed bytes now if nobody holds the lock, for as long as the readiness thread asks for it. Not on an
     * interrupted thread, whose channel write would close the channel: the readiness thread is asked again instead.
     */
    private void drainIfFree() {
        if (Thread.currentThread().isInterrupted()) {
            try {
                io.armWritable(onWritable);
            } catch (IOException | RuntimeException closed) {
                // closed: nothing is left to send
            }
            return;
        }
        while (flushWanted && lock.tryLock()) {
            try {
                flushWanted = false;
                if (owed && !outputShut && !drainNow()) {
                    io.armWritable(onWritable);
                }
            } catch (IOException | RuntimeException e) {
                // a closed or failed connection: its calls report it; the close's delivery sends what it can
            } finally {
                lock.unlock();
            }
        }
    }

    /** Lets go of the lock, then drains owed bytes if the readiness thread asked meanwhile. */
    private void unlock() {
        lock.unlock();
        if (flushWanted) {
            drainIfFree();
        }
    }

    void sync() throws IOException {
        lock.lock();
        try {
            checkOutput();
            if (send.position() > 0) {
                flush(0);
            }
        } finally {
            unlock();
        }
    }

    /** Sends a PUT of {@code src}'s remaining bytes. */
    void put(long op, long key, long offset, ByteBuffer src) throws IOException {
        lock.lock();
        try {
            checkOutput();
            header.clear().limit(frame.wrap(header, 0).put(op, key, offset, src.remaining()));
            writeFrame(src);
        } finally {
            unlock();
        }
    }

    void get(long op, long key, long offset, int count) throws IOException {
        lock.lock();
        try {
            checkOutput();
            sendFrame(room(Wire.GET_LENGTH).get(op, key, offset, count));
        } finally {
            unlock();
        }
    }

    /** Answers a PUT: ACK if {@code refused} is null, else ERROR with that reason (cut to what a frame holds). */
    void answer(long op, String refused) throws IOException {
        lock.lock();
        try {
            if (outputShut) {
                return; // this side is closing; the initiator learns so from the end of the stream
            }
            byte[] text = refused == null ? null
                    : Utf8.prefix(refused, Math.min(Wire.MAX_REASON_BYTES, pool.capacity() - Wire.OP_LENGTH));
            int textBytes = text == null ? 0 : text.length;
            Wire.Frame f = room(Wire.OP_LENGTH + textBytes);
            sendFrame(text == null ? f.ack(op) : f.error(op, text, textBytes));
        } finally {
            unlock();
        }
    }

    /** Answers a GET with the bytes of {@code source}. */
    void answerGet(long op, ByteBuffer source) throws IOException {
        lock.lock();
        try {
            if (outputShut) {
                return;
            }
            header.clear().limit(frame.wrap(header, 0).getResponse(op, source.remaining()));
            writeFrame(source);
        } finally {
            unlock();
        }
    }

    /** Bytes the socket took so far. */
    long sent() {
        return io.sent();
    }

    /** Whether a call is writing, or waiting for the socket to take its bytes. */
    boolean busy() {
        return lock.isLocked();
    }

    /**
     * Unless a writer is busy or the socket takes nothing now: sends a HEARTBEAT after what is buffered (bytes
     * written but not yet synced go with it, which the contract allows). On a non-blocking channel it never waits,
     * so the liveness thread calls it itself; on a blocking channel the write may wait for room (only when the peer
     * reads nothing, so it needs no heartbeat to stay up), so a thread of its own calls it.
     */
    void heartbeat() {
        if (!lock.tryLock()) {
            return; // a writer is busy: the peer hears from us anyway, or our writes are stuck behind its silence
        }
        try {
            if (outputShut) {
                return;
            }
            closeFrame();
            if (send.remaining() < Wire.HEADER_LENGTH) {
                return;
            }
            send.position(send.position() + frame.wrap(send, send.position()).heartbeat());
            writeBufferedNow();
        } catch (IOException e) {
            // the connection's calls report its failure; the next heartbeat tries again
        } finally {
            unlock();
        }
    }

    /**
     * Unless a writer is busy: tries, within the read timeout (or a few seconds), to send what was written but not
     * synced, then ends the stream so the peer reads -1; no frame goes out afterwards.
     *
     * @return false if a writer held the lock, so nothing was done
     */
    boolean endStream() {
        try {
            if (!lock.tryLock(10, TimeUnit.MILLISECONDS)) {
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
            unlock();
        }
        return true;
    }

    private void checkOutput() throws ClosedChannelException {
        if (outputShut) {
            throw new ClosedChannelException();
        }
    }

    private void closeFrame() {
        if (openFrame >= 0) {
            frame.wrap(send, openFrame).payloadLength(send.position() - openFrame - Wire.HEADER_LENGTH);
            openFrame = -1;
        }
    }

    /** Ends the open DATA frame and makes room for a frame of {@code length} bytes; returns the flyweight on it. */
    private Wire.Frame room(int length) throws IOException {
        closeFrame();
        if (send.remaining() < length) {
            grow();
            if (send.remaining() < length) {
                flush(0);
                if (send.remaining() < length) {
                    grow();
                }
            }
        }
        return frame.wrap(send, send.position());
    }

    /** Sends what is buffered and the frame of {@code length} bytes just encoded after it. */
    private void sendFrame(int length) throws IOException {
        send.position(send.position() + length);
        flush(0);
    }

    /** Sends everything buffered; {@code deadline} (nanoTime) bounds the wait when non-zero. */
    private void flush(long deadline) throws IOException {
        closeFrame();
        send.flip();
        try {
            io.writeFully(send, deadline);
        } finally {
            send.clear();
            toIdle();
        }
    }

    /** Moves what is buffered from the idle buffer to a borrowed one of {@code sendBuffer} bytes, if not yet. */
    private void grow() {
        if (send != idle || idle.capacity() == pool.capacity()) {
            return;
        }
        ByteBuffer big = pool.take();
        big.put(idle.flip());
        idle.clear();
        send = big;
    }

    /** Gives a borrowed buffer back once it was sent (cleared). */
    private void toIdle() {
        owed = false;
        ByteBuffer b = send;
        if (b != idle) {
            send = idle;
            pool.give(b);
        }
    }

    /** Whether a borrowed send buffer is held, for tests. */
    boolean holdsLargeBuffer() {
        return send != idle;
    }


    /**
     * Sends what is buffered, then one frame whose fixed part is in {@link #header} and whose remaining bytes are
     * {@code payload}, in one gathering write; the payload is not copied.
     */
    private void writeFrame(ByteBuffer payload) throws IOException {
        closeFrame();
        send.flip();
        gather[0] = send;
        gather[1] = header;
        gather[2] = payload;
        try {
            io.writeFully(gather, 0);
        } finally {
            gather[2] = null;
            send.clear();
            toIdle();
            header.clear();
        }
    }
}
