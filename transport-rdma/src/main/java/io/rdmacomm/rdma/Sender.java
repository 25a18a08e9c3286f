package io.rdmacomm.rdma;

import io.rdmacomm.api.Access;
import io.rdmacomm.api.CommunicatorException;
import io.rdmacomm.api.HandshakeException;
import io.rdmacomm.api.RegionDescriptor;
import io.rdmacomm.api.Units;
import io.rdmacomm.api.support.FieldHandles;
import io.rdmacomm.api.support.Waiter;
import io.rdmacomm.rdma.spi.Completion;
import io.rdmacomm.rdma.spi.LocalRegion;
import io.rdmacomm.rdma.spi.MappedRing;
import io.rdmacomm.rdma.spi.RdmaChannel;
import io.rdmacomm.rdma.spi.RegisteredBuffer;
import io.rdmacomm.rdma.spi.RemoteRegion;
import java.io.IOException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.channels.AsynchronousCloseException;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;

/**
 * The send side of a connection. Small writes are copied into a registered staging buffer that mirrors the
 * peer's ring offset for offset, and staged bytes go into the ring as DATA_INLINE messages (chunks up to
 * {@link #INLINE_MAX}) or one-sided writes followed by DATA; large chunks of direct buffers skip staging where the
 * provider's writes are one-sided; a write at the stream position of the peer's advert goes straight into the
 * advertised buffer (ZDATA). Where the provider maps the peer's ring into this process ({@link
 * RdmaChannel#mapRemote}: shared memory on one host), the ring itself takes the place of staging: a write is one copy
 * into it, and a flush sends DATA alone. A writer without ring space waits for the reader's credit. {@link #write} and
 * {@link #sync} run on one thread at a time (the contract's one writer); the {@code on...} events arrive on the
 * provider's thread.
 */
final class Sender {
    private static final int MAX_FLUSH_CHUNK = 256 * 1024;
    /** Chunks of direct buffers from this size on skip the staging copy (where the provider's writes are one-sided). */
    static final int DIRECT_RING_MIN = 32 * 1024;
    /**
     * Ring chunks up to this size travel inside their DATA_INLINE notification, one provider message instead of a
     * write followed by a notification: measured faster for small writes (see the module README).
     */
    static final int INLINE_MAX = 1024;

    private static final VarHandle WRITING = FieldHandles.of(MethodHandles.lookup(), "writing", boolean.class);
    private static final VarHandle CALLS = FieldHandles.of(MethodHandles.lookup(), "calls", long.class);

    private final ConnectionState state;
    private final String writeWhat;
    private final String syncWhat;
    private final String directWhat;
    private ByteBuffer staging;
    private LocalRegion stagingRegion;
    private RemoteRegion peerRing;
    private int peerRingSize;
    private int inlineMax;
    /** Whether {@link #staging} is the peer's ring itself, mapped ({@link RdmaChannel#mapRemote}). */
    private boolean mappedRing;
    /** The mapped ring's control words, or null: a flush publishes the ring end there. */
    private SharedNotify shared;
    /** Whether large direct writes go straight into the peer's ring (the provider's writes are one-sided). */
    private boolean directRing;
    /** Message buffer of the writing thread (DATA, DATA_INLINE, ZDATA). */
    private ByteBuffer txScratch;
    private RemoteRegion lastAdvertRegion;

    // the writing thread's state
    private long pos;
    private long ringWritten;
    private long stagedFrom;
    private long stagedPos;
    private volatile boolean writing;
    /** Counts write and sync calls, for the liveness thread: a change means the peer heard from us. */
    private volatile long calls;

    private volatile long peerRingConsumed;
    private volatile long zeroCopyBytes;
    private final AtomicReference<AdvertMessage> advert = new AtomicReference<>();
    private final AtomicInteger outstanding = new AtomicInteger();
    /** The single buffer of {@link #tryWrite(ByteBuffer)} (one writer at a time). */
    private final ByteBuffer[] one = new ByteBuffer[1];
    private final BooleanSupplier drained;
    private final BooleanSupplier ringSpace;
    /** The writing thread's direct ring and zero-copy writes, one at a time. */
    private final OpCompletion direct;
    private final Completion ringCompletion = new Completion() {
        @Override
        public void completed() {
            outstanding.decrementAndGet();
            state.wake();
        }

        @Override
        public void failed(IOException cause) {
            // the failure first: a sync() that sees nothing outstanding must also see why
            state.fail(cause);
            outstanding.decrementAndGet();
        }
    };

    Sender(ConnectionState state) {
        this.state = state;
        this.writeWhat = state.readTimeoutWhat("write waiting for the reader's credit");
        this.syncWhat = state.readTimeoutWhat("sync");
        this.directWhat = state.readTimeoutWhat("write waiting for its one-sided write's completion");
        this.direct = new OpCompletion(state);
        this.drained = () -> outstanding.get() == 0 || state.failure() != null;
        this.ringSpace = () -> peerRingSize - (ringWritten - peerRingConsumed) > 0 || state.failure() != null
                || state.peerClosed();
    }

    /**
     * Takes the peer's ring from its HELLO: allocates and registers the staging buffer that mirrors it.
     *
     * @throws HandshakeException if the ring is unusable or its staging buffer exceeds the budget
     */
    void setUp(RegionDescriptor ring) throws IOException {
        if (!ring.access().contains(Access.REMOTE_WRITE) || ring.length() <= 0
                || ring.length() > Integer.MAX_VALUE - 8) {
            throw new HandshakeException("handshake from " + state.peerName() + ": unusable receive ring " + ring
                    + " (needs remote write and a length of 1 byte to 2g)");
        }
        peerRingSize = (int) ring.length();
        RdmaChannel ch = state.channel();
        try {
            peerRing = ch.unpack(ring);
        } catch (IOException e) {
            throw new PeerRingUnreachable(e);
        }
        MappedRing mapped = ch.mapRemote(peerRing);
        if (mapped != null && mapped.ring().capacity() == peerRingSize) {
            // the peer's ring itself, in shared memory: "staging" a byte places it, a flush only notifies
            staging = mapped.ring();
            mappedRing = true;
            shared = mapped.control() == null ? null : new SharedNotify(mapped.control());
        } else {
            if (!state.budget.tryReserve(peerRingSize)) {
                throw new HandshakeException("handshake from " + state.peerName() + ": the peer's ring of "
                        + Units.formatSize(peerRingSize) + " needs a staging buffer beyond maxRegistered "
                        + Units.formatSize(state.budget.limit()));
            }
            // the provider's memory (e.g. mapped lazily where UCX does not map it), as for the receive ring
            RegisteredBuffer rb = ch.allocate(peerRingSize, Set.of());
            staging = rb.buffer();
            stagingRegion = rb.region();
        }
        directRing = !mappedRing && ch.writesAreOneSided();
        inlineMax = Math.max(0, Math.min(INLINE_MAX, ch.maxMessageSize() - DataMessage.HEADER_LENGTH));
        txScratch = ByteBuffer.allocate(DataMessage.HEADER_LENGTH + inlineMax);
    }

    /**
     * The provider could not unpack the peer's ring (e.g. UCX on shared memory attaching the segment of a ring the
     * peer freed as it closed): told apart from this side's own failures in setting up.
     */
    static final class PeerRingUnreachable extends CommunicatorException {
        private static final long serialVersionUID = 1L;

        PeerRingUnreachable(IOException cause) {
            super("the peer's receive ring is out of reach: " + cause.getMessage(), cause);
        }
    }

    /** Whether this side writes into the peer's ring mapped into this process (shared memory on one host). */
    boolean ringMapped() {
        return mappedRing;
    }

    long zeroCopyBytes() {
        return zeroCopyBytes;
    }

    long calls() {
        return calls;
    }

    /**
     * A write, tryWrite ({@code counted}) or sync begins. The flag and the count are for other threads' looks (close,
     * the liveness thread), which need no fence on the writer's path: release stores, plain on x86.
     */
    private void beginCall(boolean counted) {
        WRITING.setRelease(this, true);
        if (counted) {
            CALLS.setRelease(this, calls + 1);
        }
    }

    /** Whether a write or sync runs (close then leaves the staged bytes to it). */
    boolean isWriting() {
        return writing;
    }

    // ---- writing -----------------------------------------------------------------------------------------------

    void write(ByteBuffer src) throws IOException {
        beginCall(true);
        try {
            while (src.hasRemaining()) {
                checkWritable();
                AdvertMessage a = advert.get();
                if (a != null && a.streamPosition() == pos && src.isDirect() && advert.compareAndSet(a, null)
                        && zeroCopy(src, a)) {
                    continue;
                }
                long free = peerRingSize - (ringWritten - peerRingConsumed);
                if (free == 0) {
                    flushStaged();
                    state.waiter.awaitFor(ringSpace, Waiter.UNTIMED, state.readTimeoutNanos, writeWhat);
                    continue;
                }
                int off = (int) (ringWritten % peerRingSize);
                int n = (int) Math.min(src.remaining(), Math.min(free, peerRingSize - off));
                if (directRing && src.isDirect() && n >= DIRECT_RING_MIN && directRingWrite(src, off, n)) {
                    continue;
                }
                stage(src, off, n);
                if (ringWritten - stagedFrom >= Math.min(MAX_FLUSH_CHUNK, peerRingSize / 4)) {
                    flushStaged();
                }
            }
        } finally {
            WRITING.setRelease(this, false);
        }
    }

    /**
     * Copies what fits of {@code src} into the peer's ring (mapped, or staged for the provider to place) and sends
     * it on, never waiting: no wait for ring space, and none of the paths that wait for their completion (zero-copy
     * into an advertised buffer, the direct ring write). Returns the bytes taken, or -1 while the peer has an
     * advert pending for the next stream position (a {@link #write} takes that path).
     */
    int tryWrite(ByteBuffer src) throws IOException {
        one[0] = src;
        try {
            return (int) tryWrite(one, 0, 1);
        } finally {
            one[0] = null;
        }
    }

    /** {@link #tryWrite(ByteBuffer)} of several buffers, in order, with one flush (one notification) for all. */
    long tryWrite(ByteBuffer[] srcs, int offset, int length) throws IOException {
        beginCall(true);
        try {
            checkWritable();
            if (advertPending()) {
                return -1;
            }
            long taken = 0;
            for (int i = offset; i < offset + length; i++) {
                taken += takeIntoRing(srcs[i]);
                if (srcs[i].hasRemaining()) {
                    break;
                }
            }
            flushStaged();
            return taken;
        } finally {
            WRITING.setRelease(this, false);
        }
    }

    /** Whether the peer advertised a buffer for the next stream position: a write (which may wait) takes it. */
    private boolean advertPending() {
        AdvertMessage a = advert.get();
        return a != null && a.streamPosition() == pos;
    }

    /** Copies what fits of {@code src} into the peer's ring, unflushed; the bytes taken. */
    private int takeIntoRing(ByteBuffer src) throws IOException {
        int taken = 0;
        while (src.hasRemaining()) {
            long free = peerRingSize - (ringWritten - peerRingConsumed);
            if (free == 0) {
                break;
            }
            int off = (int) (ringWritten % peerRingSize);
            int n = (int) Math.min(src.remaining(), Math.min(free, peerRingSize - off));
            stage(src, off, n);
            taken += n;
        }
        return taken;
    }

    /** Copies {@code n} bytes of {@code src} into the staging buffer (or the mapped ring) at {@code off}. */
    private void stage(ByteBuffer src, int off, int n) throws IOException {
        try {
            staging.put(off, src, src.position(), n);
        } catch (IllegalStateException unmapped) {
            // the peer's mapped ring went with an asynchronous close
            checkWritable();
            throw unmapped;
        }
        src.position(src.position() + n);
        ringWritten += n;
        pos += n;
    }

    /**
     * Writes {@code n} bytes of a direct {@code src} straight into the peer's ring at {@code off}, skipping the
     * staging copy, and waits until the provider is done with {@code src} (write() may not return before). False
     * if {@code src} cannot be registered: the caller stages it instead.
     */
    private boolean directRingWrite(ByteBuffer src, int off, int n) throws IOException {
        RegistrationCache.Entry e = state.cache().acquire(src);
        if (e == null) {
            return false;
        }
        try {
            flushStaged();
            ByteBuffer note = DataMessage.encodeData(txScratch, pos, ringWritten, n);
            writeAndWait(e.region, src, peerRing, peerRing.descriptor().address() + off, n, note,
                    "write to " + state.peerName());
            src.position(src.position() + n);
            ringWritten += n;
            pos += n;
            stagedFrom = ringWritten;
            stagedPos = pos;
            return true;
        } finally {
            state.cache().release(e);
        }
    }

    /** Writes into the peer's advertised buffer; false if {@code src} cannot be registered. */
    private boolean zeroCopy(ByteBuffer src, AdvertMessage a) throws IOException {
        flushStaged();
        RegistrationCache.Entry e = state.cache().acquire(src);
        if (e == null) {
            return false;
        }
        try {
            RemoteRegion target = lastAdvertRegion;
            if (target == null || !target.descriptor().equals(a.region())) {
                if (target != null) {
                    target.close();
                }
                target = state.channel().unpack(a.region());
                lastAdvertRegion = target;
            }
            int n = Math.min(src.remaining(), a.length());
            ByteBuffer note = ZeroCopyDataMessage.encode(txScratch, a.seq(), pos, n);
            writeAndWait(e.region, src, target, a.address(), n, note, "zero-copy write to " + state.peerName());
            src.position(src.position() + n);
            pos += n;
            stagedPos = pos;
            zeroCopyBytes += n;
            return true;
        } finally {
            state.cache().release(e);
        }
    }

    private void writeAndWait(LocalRegion region, ByteBuffer src, RemoteRegion target, long address, int n,
            ByteBuffer note, String what) throws IOException {
        state.channel().write(region, region.address() + src.position(), target, address, n, note, direct.reset());
        if (!direct.isFinished()) {
            state.awaitOrFail(direct.finishedOrFailed, directWhat);
        }
        if (state.isClosed()) {
            // closed while the one-sided write was under way: the provider refused it, or finished it as the
            // endpoint went. Either way this write was in progress when the close came, and reports what NIO's
            // channels report then (a write that returned normally would leave the next call a plain
            // ClosedChannelException, as if the close had come between the calls)
            throw new AsynchronousCloseException();
        }
        direct.check(what);
    }

    private void flushStaged() {
        while (stagedFrom < ringWritten) {
            int off = (int) (stagedFrom % peerRingSize);
            int n = (int) Math.min(ringWritten - stagedFrom, peerRingSize - off);
            if (mappedRing) {
                // the bytes are in the peer's ring already: make them visible before the notification, which a
                // reader polling the published end does not need (then nothing is outstanding: no atomic count)
                VarHandle.storeStoreFence();
                if (shared == null || !shared.publish(stagedFrom + n, staging, off, n)) {
                    outstanding.incrementAndGet();
                    state.channel().send(DataMessage.encodeData(txScratch, stagedPos, stagedFrom, n),
                            ringCompletion);
                }
            } else if (n <= inlineMax) {
                outstanding.incrementAndGet();
                state.channel().send(DataMessage.encodeInline(txScratch, stagedPos, stagedFrom, staging, off, n),
                        ringCompletion);
            } else {
                outstanding.incrementAndGet();
                state.channel().write(stagingRegion, stagingRegion.address() + off, peerRing,
                        peerRing.descriptor().address() + off, n,
                        DataMessage.encodeData(txScratch, stagedPos, stagedFrom, n), ringCompletion);
            }
            stagedFrom += n;
            stagedPos += n;
        }
    }

    void sync() throws IOException {
        beginCall(false);
        try {
            checkWritable();
            flushStaged();
            state.waiter.awaitFor(drained, Waiter.UNTIMED, state.readTimeoutNanos, syncWhat);
            // every write is complete now; a peer that closed meanwhile (having read them, e.g. its last
            // request) does not make this sync fail, as it did when the CLOSE overtook the last completion
            if (state.isClosed()) {
                throw new AsynchronousCloseException();
            }
            if (state.failure() != null) {
                throw state.failed("write to " + state.peerName());
            }
        } finally {
            WRITING.setRelease(this, false);
        }
    }

    private void checkWritable() throws IOException {
        if (state.isClosed()) {
            throw new AsynchronousCloseException();
        }
        if (state.failure() != null) {
            throw state.failed("write to " + state.peerName());
        }
        if (state.peerClosed()) {
            throw new CommunicatorException("write to " + state.peerName() + " failed: the peer closed the connection");
        }
    }

    /**
     * For close without a writer: writes the staged bytes and waits until every write completed; returns the
     * final stream position.
     */
    long drain(long deadline) throws IOException {
        flushStaged();
        state.waiter.await(drained, deadline, "close");
        return pos;
    }

    // ---- events ------------------------------------------------------------------------------------------------

    /** The reader's credit: it consumed this many ring bytes. */
    void onCredit(long ringConsumed) {
        if (ringConsumed > peerRingConsumed) {
            peerRingConsumed = ringConsumed;
        }
    }

    void onAdvert(AdvertMessage a) {
        onCredit(a.ringConsumed());
        advert.set(a);
    }

    /** The reader takes advert {@code seq} back; true if it was not used, and the reader gets CANCEL_ACK. */
    boolean onCancel(int seq) {
        AdvertMessage a = advert.get();
        return a != null && a.seq() == seq && advert.compareAndSet(a, null);
    }

    void release() {
        if (lastAdvertRegion != null) {
            lastAdvertRegion.close();
        }
        if (peerRing != null) {
            peerRing.close();
        }
        if (stagingRegion != null) {
            stagingRegion.close();
            state.budget.release(peerRingSize);
            stagingRegion = null;
        }
    }
}
