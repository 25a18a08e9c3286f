package io.rdmacomm.rdma;

import io.rdmacomm.api.Access;
import io.rdmacomm.api.CommunicatorException;
import io.rdmacomm.api.RegionDescriptor;
import io.rdmacomm.api.Units;
import io.rdmacomm.api.support.FieldHandles;
import io.rdmacomm.api.support.Waiter;
import io.rdmacomm.rdma.spi.LocalRegion;
import io.rdmacomm.rdma.spi.RegisteredBuffer;
import java.io.IOException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.channels.AsynchronousCloseException;
import java.nio.channels.ClosedChannelException;
import java.util.EnumSet;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The receive side of a connection: the ring the peer writes into, the notified segments not read yet (in stream
 * order), the credits that return ring space to the writer, and the adverts of large direct read buffers with
 * their zero-copy arrivals. {@link #read} runs on one thread at a time (the contract's one reader); the
 * {@code on...} events arrive on the provider's thread.
 *
 * <p>A reader blocked on a large direct buffer with nothing to read advertises the buffer, tagged with its stream
 * position. If the read times out with the advert out, the peer may be writing into the buffer: the reader sends
 * CANCEL and waits (a bounded grace time) for CANCEL_ACK, or for the ZDATA that got there first.
 */
final class Receiver {
    private static final Logger LOG = LoggerFactory.getLogger(Receiver.class);
    /** How long a close spins for a read that is leaving before it parks (see {@link #leaveRead}). */
    private static final long LEAVING_SPIN_NANOS = TimeUnit.MICROSECONDS.toNanos(100);
    private static final VarHandle READY_AT = FieldHandles.of(MethodHandles.lookup(), "readyAt", long.class);
    private static final VarHandle SHARED_END = FieldHandles.of(MethodHandles.lookup(), "sharedEnd", long.class);
    private static final long CANCEL_GRACE_NANOS = TimeUnit.SECONDS.toNanos(10);

    private final ConnectionState state;
    private final String readWhat;
    private ByteBuffer ring;
    private LocalRegion ringRegion;
    /** Whether reads advertise their buffers: zeroCopyThreshold was set, or the provider places writes directly. */
    private boolean advertising;
    /**
     * The ring's control words where the writer maps the ring and reads do not advertise (so stream positions and
     * ring cursors advance together): a busy-polling read takes written bytes from the published ring end, and the
     * writer sends DATA only while no read polls. Null otherwise.
     */
    private SharedNotify shared;
    /**
     * The thread whose read polls {@link #shared}, or null: set while it spins, and kept after a read that got its
     * bytes that way (the next read of a hot exchange polls again, and the writer sends no DATA between them), until
     * that thread parks, or a reader waits for readiness ({@link #notifyReadable}) instead of polling.
     */
    private volatile Thread sharedPoller;
    /**
     * Ring end taken from {@link #shared}: the ring bytes before it are readable, the reading thread takes them
     * from the ring without {@link #segments} (with a shared ring, stream positions and ring cursors are the same).
     * Written by the reading thread only; volatile for the liveness thread and for DATA, whose chunks before it are
     * dropped.
     */
    private volatile long sharedEnd;
    /**
     * The last small chunk taken from the published end's line ({@link SharedNotify#takeInline}): its bytes, the
     * ring cursor where it starts and its length (0: none). A read copies from here instead of the ring while the
     * chunk lasts. The reading thread's.
     */
    private final byte[] inlineBytes = new byte[SharedNotify.INLINE_MAX];
    private long inlineFrom;
    private int inlineLength;
    /** Notified ring data; guarded by itself. */
    private final Segments segments = new Segments();
    /**
     * The stream position of the first of {@link #segments}, or -1 while there is none: stored (volatile) under
     * the lock at every change, so that a read, and every turn of a spinning read, sees whether a segment is ready
     * without taking the lock.
     */
    @SuppressWarnings("unused") // through READY_AT
    private volatile long readyAt = -1;
    private final ByteBuffer creditScratch = ByteBuffer.allocate(CreditMessage.LENGTH);
    /** Reads running: the ring may be provider memory that close() unmaps, so close waits for them. */
    private final AtomicInteger reading = new AtomicInteger();
    private final Waiter leaving;
    /**
     * The thread in a read or poll ({@link #enterRead}) that entered first, if any: it enters with one compare-and-set
     * and leaves with a release store (no second atomic write on a busy-polled round trip); others meanwhile count in
     * {@link #reading}.
     */
    private final AtomicReference<Thread> readingThread = new AtomicReference<>();
    private final BooleanSupplier noReads = () -> reading.get() == 0 && readingThread.get() == null;
    private final BooleanSupplier readable = this::readable;
    /** Whom to tell once when reading would not wait ({@link #notifyReadable}), or null. */
    private final AtomicReference<Runnable> readinessListener = new AtomicReference<>();

    // the reading thread's state
    private long consumed;
    private long ringConsumed;
    private long creditSent;
    private int nextAdvertSeq;
    private boolean advertised;
    private boolean cancelling;

    // the reading thread's advert as the event thread sees it
    private volatile int advertSeq;
    private volatile int advertLength;
    /** The last ZDATA: its advert's sequence number in the high half, its length in the low half. */
    private volatile long zeroCopyArrival;
    private volatile int cancelAcked = -1;

    Receiver(ConnectionState state) {
        this.state = state;
        this.readWhat = state.readTimeoutWhat("read");
        this.leaving = new Waiter(LEAVING_SPIN_NANOS, null, () -> false,
                () -> "with " + state.peerName() + " on " + state.endpoint);
    }

    /** Allocates and registers the ring, within the connection's budget. */
    void setUp() throws IOException {
        int size = state.ringSize;
        if (!state.budget.tryReserve(size)) {
            throw new CommunicatorException("ringSize " + Units.formatSize(size) + " exceeds maxRegistered");
        }
        RegisteredBuffer rb = state.channel().allocate(size, EnumSet.of(Access.REMOTE_WRITE));
        ring = rb.buffer();
        ringRegion = rb.region();
        advertising = state.zeroCopyRequested || state.channel().placesWritesDirectly();
        if (rb.control() != null && !advertising) {
            shared = new SharedNotify(rb.control());
        }
    }

    RegionDescriptor ringDescriptor() {
        return ringRegion.descriptor();
    }

    // ---- reading -------------------------------------------------------------------------------------------

    /**
     * A read, or a look at the ring or the node (available, notifyReadable, busyPoll, blockingPoll), begins: counted,
     * so that close waits for it before the ring or the node can go. The first thread in takes {@link #readingThread} with one compare-and-set, which orders it
     * before its look at the close as the increment does; returns whether it did ({@link #leaveRead}).
     */
    private boolean enterRead() {
        if (readingThread.compareAndSet(null, Thread.currentThread())) {
            return true;
        }
        reading.incrementAndGet();
        return false;
    }

    /**
     * The read of {@link #enterRead} ended; a close waiting for it is woken (one that still saw it in, as the release
     * store may be seen after this look at the close, finds it gone within its spin: awaitReadsLeft).
     */
    private void leaveRead(boolean first) {
        if (first) {
            readingThread.lazySet(null);
        } else {
            reading.decrementAndGet();
        }
        if (state.isClosed()) {
            leaving.wake();
        }
    }

    int read(ByteBuffer dst) throws IOException {
        if (!dst.hasRemaining()) {
            return 0;
        }
        boolean first = enterRead();
        try {
            return readRing(dst);
        } finally {
            leaveRead(first);
        }
    }

    private int readRing(ByteBuffer dst) throws IOException {
        long deadline = Waiter.UNTIMED; // set by the first wait that reads the clock
        RegistrationCache.Entry entry = null;
        SocketTimeoutException timedOut = null;
        boolean keepPolling = false;
        try {
            while (true) {
                if (state.isClosed()) {
                    throw new AsynchronousCloseException();
                }
                if (shared != null) {
                    pollShared();
                    if (consumed < sharedEnd) {
                        keepPolling = true;
                        return copyPublished(dst);
                    }
                }
                if (advertised && zeroCopyArrived()) { // never with a shared ring: its reads do not advertise
                    int n = (int) zeroCopyArrival;
                    dst.position(dst.position() + n);
                    consumed += n;
                    return n;
                }
                if (segmentReady()) {
                    int n = copyFromRing(dst);
                    if (n > 0) {
                        keepPolling = true;
                        return n;
                    }
                }
                if (atEnd()) {
                    return -1;
                }
                if (state.failure() != null) {
                    throw state.failed("read from " + state.peerName());
                }
                if (cancelling && cancelAcked == advertSeq) {
                    throw timedOut;
                }
                if (advertising && !advertised && dst.isDirect() && dst.remaining() >= state.zeroCopyThreshold) {
                    entry = state.cache().acquire(dst);
                    if (entry != null) {
                        advertise(dst, entry);
                    }
                }
                if (shared != null && sharedPoller != Thread.currentThread() && state.waiter.spins()) {
                    boolean flagged = sharedPoller != null; // kept by an earlier reading thread
                    sharedPoller = Thread.currentThread();
                    if (!flagged) {
                        shared.polling(true);
                        state.ringSpinning = true;
                    }
                }
                try {
                    deadline = state.waiter.awaitFor(readable, deadline, state.readTimeoutNanos, readWhat);
                } catch (SocketTimeoutException e) {
                    if (!advertised) {
                        throw e;
                    }
                    if (cancelling) {
                        LOG.warn("{}: peer {} did not answer the cancellation of advert {} in time", state.endpoint,
                                state.peerName(), advertSeq);
                        throw timedOut;
                    }
                    // the peer may be writing into dst right now: take the advert back before giving up
                    timedOut = e;
                    cancelling = true;
                    deadline = System.nanoTime() + CANCEL_GRACE_NANOS;
                    state.send(CancelMessage.encode(ByteBuffer.allocate(CancelMessage.LENGTH), CancelMessage.CANCEL,
                            advertSeq));
                }
            }
        } finally {
            if (entry != null) {
                state.cache().release(entry);
            }
            advertised = false;
            cancelling = false;
            if (!keepPolling) {
                stopSharedPolling();
            }
        }
    }

    /**
     * The thread that raised the polling flag stops polling the published ring end (its wait is about to park, or its
     * read ends without bytes; a read that got bytes leaves the flag up): clears the flag. What the writer published
     * meanwhile, when it may have seen the flag still set and sent no DATA, is taken by the next look at the ring:
     * the wait's look before it parks, the next read's first, or {@link #notifyReadable}'s. Anything published later
     * comes with DATA. The caller may be a thread that is no longer reading (a writer whose earlier read left the flag
     * up), so this only clears the flag: the published end is the reading thread's alone.
     */
    void stopSharedPolling() {
        if (shared != null && sharedPoller == Thread.currentThread()) {
            endSharedPolling(false);
        }
    }

    /**
     * Clears the polling flag, whichever thread set it; with {@code poll} (the reading thread only) takes what was
     * published meanwhile. Not once the connection is closed: its ring may be gone.
     */
    private void endSharedPolling(boolean poll) {
        sharedPoller = null;
        state.ringSpinning = false;
        if (state.isClosed()) {
            return;
        }
        shared.polling(false);
        if (poll) {
            pollShared();
        }
    }

    /**
     * The end of ring data the writer has published (or DATA notified): a sign of life of a writer that sends no DATA
     * while the flag is up, even when nothing reads.
     */
    long sharedPublished() {
        if (shared == null || state.isClosed()) {
            return sharedEnd;
        }
        try {
            return Math.max(sharedEnd, shared.ringEnd());
        } catch (IllegalStateException unmapped) {
            return sharedEnd; // the connection closed meanwhile and its ring went
        }
    }

    /**
     * Takes the ring end the writer published: the bytes before it are readable ({@link #copyPublished}), with no
     * lock and no segment. By the reading thread only, whose credit bounds what the writer may have written.
     */
    private void pollShared() {
        long end = shared.ringEnd();
        if (end == sharedEnd) {
            return;
        }
        if (end < sharedEnd || end - ringConsumed > state.ringSize) {
            if (state.failure() == null) {
                state.fail(new CommunicatorException("the shared ring written by " + state.peerName()
                        + " is corrupt: its published end " + end + " is behind " + sharedEnd
                        + " or beyond the credit (" + ringConsumed + " consumed of a " + state.ringSize
                        + " byte ring)"));
            }
            return;
        }
        long from = sharedEnd;
        // one chunk, not across the ring's end: perhaps in the end's line too
        if (inlineLength == 0 && from % state.ringSize + (end - from) <= state.ringSize
                && shared.takeInline(from, end, inlineBytes)) {
            inlineFrom = from;
            inlineLength = (int) (end - from);
        }
        SHARED_END.setRelease(this, end); // a release store: no fence on the polling path
    }

    /**
     * Reads ring bytes the writer published ({@code consumed < sharedEnd}), up to the ring's end; DATA segments they
     * cover go.
     */
    private int copyPublished(ByteBuffer dst) {
        long cursor = consumed;
        int n = (int) Math.min(Math.min(dst.remaining(), sharedEnd - cursor), state.ringSize - cursor % state.ringSize);
        copyOut(dst, cursor, n);
        dropTakenSegments(); // DATA for bytes taken here (sent while the flag was down)
        return n;
    }

    /**
     * Drops the DATA segments before the reading position (bytes taken from the published end before their DATA
     * came), taking the lock only if there is one.
     */
    private void dropTakenSegments() {
        long at = (long) READY_AT.getAcquire(this);
        if (at != -1L && at < consumed) {
            synchronized (segments) {
                dropBefore(consumed);
            }
        }
    }

    /**
     * Drops the segments, and the part of a segment, before stream position {@code upTo}: bytes taken from the
     * published ring end. Under the lock of {@link #segments}.
     */
    private void dropBefore(long upTo) {
        while (!segments.isEmpty() && segments.firstPos() < upTo) {
            segments.consume((int) Math.min(segments.firstLength(), upTo - segments.firstPos()));
        }
        segmentsChanged();
    }

    /**
     * Bytes a read returns without waiting (the contiguous notified segments from the reading position), -1 at the
     * end of the peer's stream, 0 if none yet; throws the connection's failure. Called by the one reading thread.
     */
    int available() throws IOException {
        boolean first = enterRead(); // it may look at the ring's control words
        try {
            return availableNow();
        } finally {
            leaveRead(first);
        }
    }

    private int availableNow() throws IOException {
        if (state.isClosed()) {
            throw new ClosedChannelException();
        }
        int n = 0;
        if (shared != null) {
            pollShared(); // bytes published without DATA while an earlier read kept the flag up
            n = (int) Math.min(Integer.MAX_VALUE, sharedEnd - consumed);
        }
        if (n <= 0) {
            synchronized (segments) {
                if (shared != null) {
                    dropBefore(consumed);
                }
                n = segments.contiguousFrom(consumed);
            }
        }
        if (n > 0) {
            return n;
        }
        if (atEnd()) {
            return -1;
        }
        if (state.failure() != null) {
            throw state.failed("read from " + state.peerName());
        }
        return 0;
    }

    /**
     * Drives the node's progress on the calling thread until {@code until} holds or {@code nanos} passed; counted
     * as a read, so close waits for it to leave before the node can go.
     */
    boolean busyPoll(long nanos, BooleanSupplier until) {
        boolean first = enterRead();
        try {
            if (state.isClosed()) {
                return false;
            }
            long end = System.nanoTime() + nanos;
            try {
                for (int i = 1; ; i++) {
                    if (until.getAsBoolean()) {
                        return true;
                    }
                    if (state.isClosed()) {
                        return false;
                    }
                    state.poll();
                    if (i % Waiter.CLOCK_EVERY == 0 && System.nanoTime() - end >= 0) {
                        return until.getAsBoolean();
                    }
                }
            } finally {
                state.pollingEnded();
            }
        } finally {
            leaveRead(first);
        }
    }

    /**
     * Waits on the calling thread for the node's events, progressing them here, until {@code until} holds or
     * {@code nanos} passed (see {@link ConnectionState#waitAndPoll}); counted as a read, as {@link #busyPoll} is.
     */
    boolean blockingPoll(long nanos, BooleanSupplier until) {
        boolean first = enterRead();
        try {
            // the close waits for this wait to leave (it counts as a read): the close ends it (markClosed wakes the
            // node's waiter)
            return !state.isClosed() && state.waitAndPoll(nanos, closedOr(until));
        } finally {
            leaveRead(first);
        }
    }

    /** {@code until}, or this connection closed: made once per caller's condition (an event loop passes the same one). */
    private BooleanSupplier closedOr(BooleanSupplier until) {
        ClosedOr c = closedOr;
        if (c == null || c.until != until) {
            c = new ClosedOr(until, () -> state.isClosed() || until.getAsBoolean());
            closedOr = c;
        }
        return c.combined;
    }

    private record ClosedOr(BooleanSupplier until, BooleanSupplier combined) {
    }

    /** The last {@link #closedOr} made (racy between callers by design: either pair is right). */
    private volatile ClosedOr closedOr;

    /** Runs {@code listener} once reading would not wait: at once if it would not now, else on the next event. */
    boolean notifyReadable(Runnable listener) {
        if (shared != null) {
            // counted while it touches the ring's control words, not while the listener runs (which may close)
            boolean first = enterRead();
            try {
                if (sharedPoller != null) {
                    endSharedPolling(true); // from now on the writer's DATA wakes the listener
                }
                dropTakenSegments(); // not a reason to run the listener
            } finally {
                leaveRead(first);
            }
        }
        if (readableNow()) {
            // bytes (or an end) wait already: the listener runs here, before this returns, never on a transport
            // thread that an event of the connection happens to wake meanwhile
            readinessListener.set(null);
            listener.run();
            return true;
        }
        readinessListener.set(listener);
        tellIfReadable();
        return true;
    }

    /** Whether a read would not block now: bytes in order, the end, a failure or the close. */
    private boolean readableNow() {
        // readyAt with volatile semantics here: this look (after the listener was set) and onData's (a volatile
        // store of readyAt, then a look at the listener) must not both miss the other
        long at = (long) READY_AT.getVolatile(this);
        return shared != null && consumed < sharedEnd || at != -1L && at <= consumed || atEnd()
                || state.failure() != null || state.isClosed();
    }

    /** On every event of the connection ({@link ConnectionState#wake}): runs the listener if one waits and reading would not. */
    void tellIfReadable() {
        if (readinessListener.get() != null && readableNow()) {
            Runnable r = readinessListener.getAndSet(null);
            if (r != null) {
                r.run();
            }
        }
    }

    /** The condition a blocked read waits for: something to return, or something to throw. */
    private boolean readable() {
        if (shared != null) {
            pollShared();
            if (consumed < sharedEnd) {
                return true;
            }
        }
        return advertised && zeroCopyArrived() || segmentReady() || atEnd() || state.failure() != null
                || cancelling && cancelAcked == advertSeq;
    }

    private boolean zeroCopyArrived() {
        long a = zeroCopyArrival;
        return (int) (a >>> 32) == advertSeq && (int) a > 0;
    }

    private boolean segmentReady() {
        // with a shared ring the first segment may lie before the reading position, if its DATA came as the bytes
        // were taken from the published end: a spurious yes, after which a read drops it
        long at = (long) READY_AT.getAcquire(this);
        return at != -1L && at <= consumed;
    }

    private boolean atEnd() {
        return state.peerClosed() && consumed >= state.peerFinalPosition();
    }

    private void advertise(ByteBuffer dst, RegistrationCache.Entry entry) {
        AdvertMessage a = new AdvertMessage(nextAdvertSeq++, consumed, ringConsumed,
                entry.region.address() + dst.position(), dst.remaining(), entry.region.descriptor());
        advertLength = a.length();
        advertSeq = a.seq();
        advertised = true;
        creditSent = ringConsumed;
        state.send(a.encode(ByteBuffer.allocate(a.encodedLength())));
    }

    /** After a change of {@link #segments}, under its lock: publishes where the first segment starts. */
    private void segmentsChanged() {
        // a volatile store (always under the lock, off the polling path): see readableNow
        READY_AT.setVolatile(this, segments.isEmpty() ? -1L : segments.firstPos());
    }

    private int copyFromRing(ByteBuffer dst) {
        long cursor;
        int n;
        // one look under the lock takes the bytes off the first segment: only this thread consumes, and the ring
        // keeps them until the credit below lets the writer reuse them
        synchronized (segments) {
            if (shared != null) {
                dropBefore(consumed);
            }
            if (segments.isEmpty() || segments.firstPos() != consumed) {
                segmentsChanged();
                return 0;
            }
            cursor = segments.firstCursor();
            n = Math.min(dst.remaining(), segments.firstLength());
            segments.consume(n);
            segmentsChanged();
        }
        copyOut(dst, cursor, n);
        return n;
    }

    /**
     * Copies the {@code n} ring bytes at {@code cursor} (the reading position) into {@code dst}, from the inline
     * chunk if it holds them, and counts them consumed; sends the credit when half the ring was consumed.
     */
    private void copyOut(ByteBuffer dst, long cursor, int n) {
        if (inlineLength > 0 && cursor >= inlineFrom && cursor + n <= inlineFrom + inlineLength) {
            dst.put(dst.position(), inlineBytes, (int) (cursor - inlineFrom), n);
            if (cursor + n == inlineFrom + inlineLength) {
                inlineLength = 0;
            }
        } else {
            if (inlineLength > 0 && cursor + n >= inlineFrom + inlineLength) {
                inlineLength = 0; // read past it from the ring
            }
            dst.put(dst.position(), ring, (int) (cursor % state.ringSize), n);
        }
        dst.position(dst.position() + n);
        consumed += n;
        ringConsumed += n;
        if (ringConsumed - creditSent >= state.ringSize / 2) {
            creditSent = ringConsumed;
            state.send(CreditMessage.encode(creditScratch, ringConsumed));
        }
    }

    // ---- events ------------------------------------------------------------------------------------------------

    /** DATA or DATA_INLINE: a segment of the ring is ready; a DATA_INLINE's bytes go into the ring first. */
    void onData(ByteBuffer m) throws MalformedMessageException {
        DataMessage.check(m, state.ringSize);
        long cursor = DataMessage.ringCursor(m);
        int n = DataMessage.length(m);
        if (m.get(m.position()) == DataMessage.DATA_INLINE) {
            // the ring space is the writer's by the credit protocol: no reader touches it until the segment is added
            ring.put((int) (cursor % state.ringSize), m, DataMessage.bytesIndex(m), n);
        }
        synchronized (segments) {
            if (shared != null) {
                long published = sharedEnd;
                if (cursor + n <= published) {
                    return; // taken from the published ring end already
                }
                if (cursor < published) {
                    throw new MalformedMessageException(DataMessage.DATA, "ring bytes " + cursor + ".." + (cursor + n)
                            + " overlap those published up to " + published);
                }
                segments.add(DataMessage.streamPosition(m), cursor, n);
                // segments that the reader took from the published end after they came (their DATA raced its poll)
                dropBefore(published);
                return;
            }
            segments.add(DataMessage.streamPosition(m), cursor, n);
            segmentsChanged();
        }
    }

    void onZeroCopyData(ByteBuffer m) throws MalformedMessageException {
        ZeroCopyDataMessage.check(m);
        int seq = ZeroCopyDataMessage.seq(m);
        int n = ZeroCopyDataMessage.length(m);
        if (seq == advertSeq && n > advertLength) {
            throw new MalformedMessageException(ZeroCopyDataMessage.TYPE, "length " + n + " exceeds the "
                    + advertLength + " bytes of advert " + seq);
        }
        zeroCopyArrival = ((long) seq << 32) | n;
    }

    void onCancelAck(int seq) {
        cancelAcked = seq;
    }

    // ---- close -------------------------------------------------------------------------------------------------

    /**
     * Once the connection is closed: waits (bounded, and not cut short by an interrupt) until no read runs, since
     * the ring may be provider memory that is unmapped next.
     */
    void awaitReadsLeft(long timeoutNanos) {
        try {
            leaving.awaitUninterruptibly(noReads, Waiter.deadlineAfter(timeoutNanos), "close (waiting for a read to leave)");
        } catch (IOException e) {
            LOG.warn("{}: a read on {} did not leave within {} of close: {}", state.endpoint, state.peerName(),
                    Units.formatDuration(java.time.Duration.ofNanos(timeoutNanos)), e.toString());
        }
    }

    void release() {
        if (ringRegion != null) {
            ringRegion.close();
            state.budget.release(state.ringSize);
            ringRegion = null;
        }
    }
}
