package io.rdmacomm.netty;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelOutboundBuffer;
import io.netty.util.ReferenceCountUtil;
import io.rdmacomm.api.Communicator;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;

/**
 * The writes of one {@link CommunicatorSocketChannel}: a round takes up to {@link #MAX_BATCH} flushed buffers (about
 * {@link #MAX_BATCH_BYTES} bytes) on the loop, writes them and syncs on a {@link Blocking} thread (a communicator's
 * write may block on back-pressure), then completes their promises on the loop and starts the next round. The
 * buffers stay in the outbound buffer meanwhile, so water marks and writability work as on NIO.
 */
final class WriteRound {
    /** Flushed messages one write round takes at most, and bytes, past the first message. */
    private static final int MAX_BATCH = 64;
    private static final long MAX_BATCH_BYTES = 1 << 20;

    private final CommunicatorSocketChannel channel;
    // set on the loop, written on a Blocking thread, completed on the loop
    private final Object[] batch = new Object[MAX_BATCH];
    private int batchSize;
    private long batchBytes;
    private boolean inProgress;
    private volatile Throwable failure;
    /** Whether a Blocking thread holds the batch: a close waits for it to let go ({@link #awaitWriter}). */
    private boolean writerBusy;
    private final Object writerLock = new Object();
    private final Runnable writeTask = this::writeBatch;
    private final Runnable doneTask = this::done;
    private final ChannelOutboundBuffer.MessageProcessor collector = this::collect;
    /** Whether the loop offers writes to {@link Communicator#tryWrite}; off after {@link #MAX_REFUSALS} refusals. */
    private boolean inlineWrites = INLINE_WRITES;
    /** {@code -Dio.rdmacomm.netty.inlineWrites=false}: every write goes through a round (to compare). */
    private static final boolean INLINE_WRITES =
            !"false".equals(System.getProperty("io.rdmacomm.netty.inlineWrites"));
    /** tryWrite's refusals (-1) in a row; at {@link #MAX_REFUSALS} the channel's writes go to rounds only. */
    private int refusals;
    private static final int MAX_REFUSALS = 8;
    /** Passes of {@link #writeInline} over the flushed messages (promise listeners may flush more meanwhile). */
    private static final int INLINE_SPINS = 4;

    WriteRound(CommunicatorSocketChannel channel) {
        this.channel = channel;
    }

    /**
     * On the loop: writes what the communicator takes without waiting ({@link Communicator#tryWrite}) right here,
     * then starts a round over the flushed messages left in {@code in}, unless one is in progress.
     */
    void start(ChannelOutboundBuffer in) {
        if (inProgress) {
            return;
        }
        dropEmptyHead(in, null);
        if (in.isEmpty()) {
            return;
        }
        if (inlineWrites && writeInline(in)) {
            return;
        }
        batchSize = 0;
        batchBytes = 0;
        try {
            in.forEachFlushedMessage(collector);
        } catch (Exception e) {
            releaseBatch();
            throw new IllegalStateException(e);
        }
        if (batchSize == 0) {
            return;
        }
        inProgress = true;
        failure = null;
        synchronized (writerLock) {
            writerBusy = true;
        }
        try {
            Blocking.EXECUTOR.execute(writeTask);
        } catch (RuntimeException e) {
            inProgress = false;
            releaseBatch();
            writerDone();
            throw e;
        }
    }

    /**
     * Writes flushed messages on the loop while the communicator takes them without waiting; true if none is left.
     * Messages written whole are removed (their promises complete here), a message written in part keeps its rest.
     * A communicator that refuses ({@code -1}) {@link #MAX_REFUSALS} times in a row turns this off for the channel;
     * a failure leaves the messages to a round, whose write reports it as usual.
     */
    private boolean writeInline(ChannelOutboundBuffer in) {
        Communicator c = channel.communicator();
        for (int spin = 0; spin < INLINE_SPINS && !in.isEmpty(); spin++) {
            ByteBuffer[] buffers = in.nioBuffers(MAX_BATCH, MAX_BATCH_BYTES);
            int count = in.nioBufferCount();
            if (count == 0) {
                return false; // not all ByteBufs, or nothing readable at the head: a round sorts it out
            }
            long want = in.nioBufferSize();
            long taken;
            try {
                taken = c.tryWrite(buffers, 0, count);
            } catch (IOException | RuntimeException e) {
                return false;
            }
            if (taken < 0) {
                // cannot now; a communicator that never can (the default) stops being asked
                inlineWrites = ++refusals < MAX_REFUSALS;
                return false;
            }
            refusals = 0;
            boolean full = taken < want;
            in.removeBytes(taken);
            dropEmptyHead(in, null);
            if (full) {
                return in.isEmpty();
            }
        }
        return in.isEmpty();
    }

    /** Takes flushed messages into the batch, retained: a close meanwhile releases the outbound buffer's reference. */
    private boolean collect(Object msg) {
        if (batchSize > 0 && batchBytes >= MAX_BATCH_BYTES) {
            return false;
        }
        ByteBuf buf = (ByteBuf) msg;
        batch[batchSize++] = buf.retain();
        batchBytes += buf.readableBytes();
        return batchSize < MAX_BATCH;
    }

    /**
     * On a Blocking thread: writes the batch and syncs, then lets go of the batch's references (after the sync: a
     * transport may keep a reference to what it was given until then).
     */
    private void writeBatch() {
        try {
            Communicator c = channel.communicator();
            for (int i = 0; i < batchSize; i++) {
                ByteBuf buf = (ByteBuf) batch[i];
                if (buf.isReadable()) {
                    if (buf.nioBufferCount() == 1) {
                        c.write(buf.nioBuffer());
                    } else {
                        for (ByteBuffer b : buf.nioBuffers()) {
                            c.write(b);
                        }
                    }
                }
            }
            c.sync();
        } catch (Throwable t) {
            failure = t;
        } finally {
            releaseBatch();
            writerDone();
        }
        try {
            channel.eventLoop().execute(doneTask);
        } catch (RuntimeException rejected) {
            // the loop is gone: nothing is left to complete
        }
    }

    private void writerDone() {
        synchronized (writerLock) {
            writerBusy = false;
            writerLock.notifyAll();
        }
    }

    /**
     * Waits (boundedly) for a write round's thread to let go of its buffers, so that when the close then fails the
     * outbound buffer's messages, their promises fail with the channel's the only reference left, as on NIO.
     */
    void awaitWriter() throws InterruptedException {
        awaitWriter(TimeUnit.SECONDS.toNanos(10));
    }

    /** {@link #awaitWriter()} for at most {@code nanos}. */
    void awaitWriter(long nanos) throws InterruptedException {
        long deadline = System.nanoTime() + nanos;
        synchronized (writerLock) {
            long left;
            while (writerBusy && (left = deadline - System.nanoTime()) > 0) {
                TimeUnit.NANOSECONDS.timedWait(writerLock, left);
            }
        }
    }

    private void releaseBatch() {
        for (int i = 0; i < batchSize; i++) {
            ReferenceCountUtil.safeRelease(batch[i]);
        }
    }

    /**
     * Removes the empty buffers at the head of the flushed messages, up to {@code next} (the batch's next message,
     * or null): the entries of writes cancelled before their flush (Netty keeps them in the flushed list with an
     * empty buffer, and no round takes them) and empty writes (whose promises succeed, as on NIO). Left in place,
     * a cancelled entry would hide the batch's messages from {@link #done} and the round would write them again.
     */
    private static void dropEmptyHead(ChannelOutboundBuffer in, Object next) {
        Object head;
        while ((head = in.current()) != null && head != next && head instanceof ByteBuf
                && !((ByteBuf) head).isReadable()) {
            in.remove();
        }
    }

    /**
     * On the loop: completes the written messages' promises, then starts the next round. The round counts as in
     * progress until every promise completed: a listener that writes and flushes (ChunkedWriteHandler, SslHandler)
     * must not start a round over messages still being removed.
     */
    private void done() {
        Throwable f = failure;
        failure = null;
        ChannelOutboundBuffer in = channel.unsafe().outboundBuffer();
        int n = batchSize;
        try {
            for (int i = 0; i < n; i++) {
                Object msg = batch[i];
                batch[i] = null;
                if (in != null) {
                    dropEmptyHead(in, msg);
                }
                if (in != null && in.current() == msg) {
                    if (f == null) {
                        in.remove();
                    } else {
                        in.remove(f);
                    }
                }
            }
        } finally {
            batchSize = 0;
            inProgress = false;
        }
        if (in == null) {
            return;
        }
        if (f != null) {
            channel.writeFailed(f);
        } else if (!in.isEmpty()) {
            channel.flushMore();
        }
    }
}
