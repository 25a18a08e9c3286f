package io.rdmacomm.rdma.ucx.jucx;

import io.rdmacomm.api.CommunicatorException;
import io.rdmacomm.rdma.spi.Completion;
import io.rdmacomm.rdma.ucx.UcxWire;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.openucx.jucx.UcxCallback;
import org.openucx.jucx.UcxUtils;
import org.openucx.jucx.ucp.UcpConstants;
import org.openucx.jucx.ucp.UcpRemoteKey;
import org.openucx.jucx.ucp.UcpRequest;

/**
 * The UCX requests of one channel, issued from a pool of send slots: direct memory holding the receiver id, header
 * and (small) payload of one active message, each also the JUCX callback of the requests that carry it. The steady
 * state thus issues requests without allocating memory of its own (JUCX itself allocates a request object per
 * operation). A write is put, flush, then the notification from the same slot; or, where the channel is eager
 * (one-sided access withheld: shared memory, tcp), one active message carrying data and notification.
 */
final class JucxRequests {
    /** Puts this process issued (a test's evidence that the one-sided path ran). */
    static final java.util.concurrent.atomic.LongAdder PUTS = new java.util.concurrent.atomic.LongAdder();
    /** Bytes of a write's active message header: receiver id, destination address, length; the notification follows. */
    private static final int SLOT_SIZE = 2048;
    private static final int SLOTS = 32;

    private final JucxChannel channel;
    private final JucxNode loop;
    private final Slot[] free = new Slot[SLOTS];
    private int freeCount;

    JucxRequests(JucxChannel channel, JucxNode loop) {
        this.channel = channel;
        this.loop = loop;
        ByteBuffer slab = ByteBuffer.allocateDirect(SLOT_SIZE * SLOTS);
        for (int i = 0; i < SLOTS; i++) {
            free[freeCount++] = new Slot(slab.slice(i * SLOT_SIZE, SLOT_SIZE), true);
        }
    }

    void send(ByteBuffer message, Completion done) {
        int n = message.remaining();
        Slot s = slot(4 + n);
        s.start(Slot.SEND, done, "send").put(message.duplicate());
        if (usable(s)) {
            am(s, UcxWire.AM_CONTROL, s.address, 4, s.address + 4, n);
        }
    }

    /** An active message carrying the data and the notification; the target's progress places the data. */
    void eagerWrite(long srcAddress, long dstAddress, int length, ByteBuffer notification, Completion done) {
        int noteLength = notification == null ? 0 : notification.remaining();
        Slot s = slot(UcxWire.WRITE_HEADER + noteLength);
        ByteBuffer h = s.start(Slot.EAGER_WRITE, done, "write").putLong(dstAddress).putInt(length);
        if (notification != null) {
            h.put(notification.duplicate());
        }
        if (usable(s)) {
            am(s, UcxWire.AM_WRITE, s.address, h.position(), srcAddress, length);
        }
    }

    /** Put, flush, then the notification (if any) once the flush reports the data placed. */
    void putWrite(long srcAddress, UcpRemoteKey dst, long dstAddress, int length, ByteBuffer notification,
            Completion done) {
        Slot s = slot(4 + (notification == null ? 0 : notification.remaining()));
        ByteBuffer m = s.start(notification == null ? Slot.FLUSH : Slot.PUT_FLUSH, done, "write");
        if (notification != null) {
            m.put(notification.duplicate());
        }
        s.amLength = m.position();
        if (!usable(s)) {
            return;
        }
        IOException failed = null;
        if (!channel.enter()) {
            failed = channel.refusal();
        } else {
            try {
                // JUCX allocates a request per put; a put carries no callback: the flush reports it
                channel.endpoint().putNonBlocking(srcAddress, length, dstAddress, dst, null, JucxRuntime.HOST_MEMORY);
                PUTS.increment();
            } catch (RuntimeException e) {
                failed = new CommunicatorException("put to " + channel.peerName() + " failed: " + e.getMessage(), e);
            } finally {
                channel.exit();
            }
        }
        if (failed != null) {
            int gen = s.issue();
            loop.track();
            s.fail(gen, failed);
            return;
        }
        flush(s);
    }

    void read(UcpRemoteKey src, long srcAddress, long dstAddress, int length, Completion done) {
        Slot s = slot(0);
        s.start(Slot.SEND, done, "read");
        if (!usable(s)) {
            return;
        }
        int gen = s.issue();
        loop.track();
        if (!channel.enter()) {
            s.fail(gen, channel.refusal());
            return;
        }
        UcpRequest r;
        try {
            r = channel.endpoint().getNonBlocking(srcAddress, src, dstAddress, length, s, JucxRuntime.HOST_MEMORY);
        } catch (RuntimeException e) {
            s.fail(gen, new CommunicatorException("get from " + channel.peerName() + " failed: " + e.getMessage(),
                    e));
            return;
        } finally {
            channel.exit();
        }
        loop.issued(r);
    }

    /** Whether operations may be issued; if not, fails {@code s}'s completion (without issuing) and frees it. */
    private boolean usable(Slot s) {
        IOException refused = channel.refusal();
        if (refused == null) {
            return true;
        }
        Completion d = s.done;
        release(s);
        d.failed(refused);
        return false;
    }

    /** A free slot of at least {@code size} bytes: pooled if one is free and large enough, else a new one. */
    private Slot slot(int size) {
        if (size <= SLOT_SIZE) {
            synchronized (free) {
                if (freeCount > 0) {
                    return free[--freeCount];
                }
            }
        }
        return new Slot(ByteBuffer.allocateDirect(Math.max(size, SLOT_SIZE)), false);
    }

    private void release(Slot s) {
        s.done = null;
        if (s.pooled) {
            synchronized (free) {
                free[freeCount++] = s;
            }
        }
    }

    /**
     * Issues an active message whose header (receiver id first) and data lie at the given addresses. Like every
     * request, only between {@link JucxChannel#enter()} and {@link JucxChannel#exit()}: never on a closing endpoint.
     */
    private void am(Slot s, int amId, long headerAddress, int headerLength, long dataAddress, long dataLength) {
        int gen = s.issue();
        loop.track();
        if (!channel.enter()) {
            s.fail(gen, channel.refusal());
            return;
        }
        UcpRequest r;
        try {
            // engine messages always eager: an ucx-ffm peer refuses a control message that arrives as rendezvous
            long flags = amId == UcxWire.AM_CONTROL ? UcpConstants.UCP_AM_SEND_FLAG_EAGER : 0;
            r = channel.endpoint().sendAmNonBlocking(amId, headerAddress, headerLength, dataAddress, dataLength,
                    flags, s, JucxRuntime.HOST_MEMORY);
        } catch (RuntimeException e) {
            s.fail(gen, new CommunicatorException("active message to " + channel.peerName() + " failed: "
                    + e.getMessage(), e));
            return;
        } finally {
            channel.exit();
        }
        loop.issued(r);
    }

    private void flush(Slot s) {
        int gen = s.issue();
        loop.track();
        if (!channel.enter()) {
            s.fail(gen, channel.refusal());
            return;
        }
        UcpRequest r;
        try {
            r = channel.endpoint().flushNonBlocking(s);
        } catch (RuntimeException e) {
            s.fail(gen, new CommunicatorException("flush to " + channel.peerName() + " failed: " + e.getMessage(), e));
            return;
        } finally {
            channel.exit();
        }
        loop.issued(r);
    }

    /** A message in flight and the callback of the requests that carry it; see the class comment. */
    private final class Slot extends UcxCallback {
        static final int SEND = 0;
        static final int PUT_FLUSH = 1;
        static final int NOTE = 2;
        static final int EAGER_WRITE = 3;
        static final int FLUSH = 4;

        final ByteBuffer mem;
        final long address;
        final boolean pooled;
        int stage;
        int amLength;
        Completion done;
        String what;
        /** Incremented per issued request; a request's outcome is taken once ({@link #finished}). */
        private int generation;
        private int finished;

        Slot(ByteBuffer mem, boolean pooled) {
            this.mem = mem.order(ByteOrder.BIG_ENDIAN);
            this.address = UcxUtils.getAddress(mem.duplicate().position(0));
            this.pooled = pooled;
        }

        /** Starts an active message in this slot: the receiver id, then whatever the caller puts. */
        ByteBuffer start(int stage, Completion done, String what) {
            this.stage = stage;
            this.done = done;
            this.what = what;
            return mem.clear().putInt(channel.remoteId());
        }

        synchronized int issue() {
            return ++generation;
        }

        /** Takes the outcome of request {@code gen} once; false if it was taken or the slot moved on. */
        private synchronized boolean take(int gen) {
            if (generation != gen || finished == gen) {
                return false;
            }
            finished = gen;
            return true;
        }

        private synchronized int generation() {
            return generation;
        }

        @Override
        public void onSuccess(UcpRequest request) {
            if (!take(generation())) {
                return;
            }
            loop.end();
            Completion d = done;
            switch (stage) {
                case PUT_FLUSH -> {
                    // the data is placed: now the notification, from this slot
                    stage = NOTE;
                    am(this, UcxWire.AM_CONTROL, address, 4, address + 4, amLength - 4);
                    d.completed();
                }
                case EAGER_WRITE -> {
                    stage = FLUSH;
                    flush(this);
                }
                case NOTE -> release(this);
                default -> {
                    release(this);
                    d.completed();
                }
            }
        }

        @Override
        public void onError(int status, String message) {
            fail(generation(), new CommunicatorException(what + " on the connection to " + channel.peerName()
                    + " failed: " + message, status, null));
        }

        void fail(int gen, IOException e) {
            if (!take(gen)) {
                return;
            }
            loop.end();
            Completion d = done;
            boolean note = stage == NOTE;
            release(this);
            if (note) {
                channel.failConnection(e);
            } else {
                d.failed(e);
            }
        }
    }
}
