package io.rdmacomm.netty;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.RecvByteBufAllocator;
import io.rdmacomm.api.Communicator;
import java.io.IOException;
import java.util.function.BooleanSupplier;

/**
 * One readiness event's reads of a {@link CommunicatorSocketChannel}, on its loop: buffers from the channel's
 * allocator, each filled with what the communicator reports {@linkplain Communicator#available() available} (so no
 * read blocks) and fired down the pipeline, as long as the allocator's handle wants more.
 */
final class Reads {
    /** What a round of reads ended with. */
    enum Outcome {
        /** Nothing was available. */
        NOTHING,
        /** At least one buffer went down the pipeline; the stream goes on. */
        READ,
        /** The peer's stream ended (after whatever was read first). */
        END
    }

    private Reads() {
    }

    /**
     * Reads what is available into buffers and fires each, running {@code beforeFire} first (a pending read is
     * served by then, and a handler may ask for the next); the caller fires read-complete afterwards.
     *
     * @throws IOException as the communicator's read or available threw; a buffer being filled is released first
     */
    @SuppressWarnings("deprecation") // RecvByteBufAllocator.Handle: what AbstractUnsafe hands out
    static Outcome readAvailable(Communicator c, ChannelPipeline pipeline, RecvByteBufAllocator.Handle allocHandle,
            ByteBufAllocator alloc, BooleanSupplier active, Runnable beforeFire) throws IOException {
        Outcome outcome = Outcome.NOTHING;
        ByteBuf buf = null;
        try {
            do {
                int available = c.available();
                if (available == 0) {
                    break;
                }
                if (available < 0) {
                    return Outcome.END;
                }
                buf = allocHandle.allocate(alloc);
                allocHandle.attemptedBytesRead(buf.writableBytes());
                int total = fill(c, buf, available);
                boolean end = total < 0;
                if (end) {
                    total = -1 - total;
                }
                if (total == 0) {
                    buf.release();
                    buf = null;
                    return end ? Outcome.END : outcome;
                }
                allocHandle.lastBytesRead(total);
                allocHandle.incMessagesRead(1);
                outcome = Outcome.READ;
                ByteBuf fired = buf;
                buf = null;
                beforeFire.run();
                pipeline.fireChannelRead(fired);
                if (end) {
                    return Outcome.END;
                }
            } while (allocHandle.continueReading() && active.getAsBoolean());
            return outcome;
        } finally {
            if (buf != null) {
                buf.release();
            }
        }
    }

    /**
     * Fills {@code buf} with what is there, as one socket read would (a transport's available() may count one frame,
     * or part of one, at a time): the bytes read, or {@code -1 - bytes} where the stream ended after them.
     */
    private static int fill(Communicator c, ByteBuf buf, int available) throws IOException {
        int total = 0;
        do {
            int want = Math.min(available, buf.writableBytes());
            int n = c.read(buf.internalNioBuffer(buf.writerIndex(), want));
            if (n < 0) {
                return -1 - total;
            }
            if (n == 0) {
                return total;
            }
            buf.writerIndex(buf.writerIndex() + n);
            total += n;
        } while (buf.isWritable() && (available = c.available()) > 0);
        return available < 0 ? -1 - total : total;
    }
}
