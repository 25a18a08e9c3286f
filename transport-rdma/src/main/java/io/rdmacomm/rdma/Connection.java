package io.rdmacomm.rdma;

import io.rdmacomm.api.Access;
import io.rdmacomm.api.CommunicatorException;
import io.rdmacomm.api.Endpoint;
import io.rdmacomm.api.EndpointOption;
import io.rdmacomm.api.HandshakeException;
import io.rdmacomm.api.MemoryRegion;
import io.rdmacomm.api.RegionDescriptor;
import io.rdmacomm.api.RemoteAccessException;
import io.rdmacomm.api.Units;
import io.rdmacomm.rdma.spi.ChannelHandler;
import io.rdmacomm.rdma.spi.Completion;
import io.rdmacomm.rdma.spi.LocalRegion;
import io.rdmacomm.rdma.spi.RdmaChannel;
import io.rdmacomm.rdma.spi.RegisteredBuffer;
import io.rdmacomm.rdma.spi.RemoteRegion;
import java.io.IOException;
import java.net.SocketTimeoutException;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.channels.AsynchronousCloseException;
import java.nio.channels.ClosedChannelException;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The stream protocol engine for one connection, on any {@link RdmaChannel}.
 *
 * <p>Each side registers a receive ring and sends its descriptor in the HELLO. The writer copies small writes into
 * a registered staging buffer that mirrors the peer's ring offset for offset, and writes staged bytes one-sided
 * into the ring followed by a DATA notification; the reader copies out and returns ring space with a CREDIT once
 * half the ring is consumed; a writer without ring space blocks. A reader blocked on a large direct buffer with
 * nothing to read advertises the buffer (ADVERT, tagged with its stream position); a writer whose stream position
 * equals the advertised one writes its direct buffer straight into it (ZDATA). Since ring data and zero-copy data
 * are both tied to stream positions, exactly one of them fills any position and a stale advert is never used.
 * Notifications may arrive out of order; the reader orders them by stream position.
 */
final class Connection implements ChannelHandler {
    private static final Logger LOG = LoggerFactory.getLogger(Connection.class);
    private static final long PARK_MAX_NANOS = TimeUnit.MILLISECONDS.toNanos(50);
    private static final long CANCEL_GRACE_NANOS = TimeUnit.SECONDS.toNanos(10);
    private static final long CLOSE_FLUSH_DEFAULT_NANOS = TimeUnit.SECONDS.toNanos(3);
    private static final int MAX_FLUSH_CHUNK = 256 * 1024;
    /** Chunks of direct buffers from this size on skip the staging copy (when {@link #directRing}). */
    static final int DIRECT_RING_MIN = 32 * 1024;
    /** RDMACOMM_DIRECT_RING=0 turns the direct ring path off (for A/B measurements). */
    private static final boolean DIRECT_RING_ENABLED = !"0".equals(System.getenv("RDMACOMM_DIRECT_RING"));
    /**
     * Ring chunks up to this size travel inside their DATA_INLINE notification, one provider message instead of a
     * write followed by a notification: measured faster for small writes (see the module README).
     */
    static final int INLINE_MAX = 1024;

    private final Endpoint endpoint;
    private final int ringSize;
    private final int zeroCopyThreshold;
    /** Whether reads advertise their buffers: zeroCopyThreshold was set, or the provider places writes directly. */
    private boolean advertising;
    private final long readTimeoutNanos;
    private final long busyPollNanos;
    private final long handshakeTimeoutNanos;
    private final Budget budget;

    private volatile RdmaChannel channel;
    private volatile ByteBuffer peerHello;
    private volatile boolean established;
    private final Set<Thread> waiters = ConcurrentHashMap.newKeySet();
    /** The threads in read() and write()/sync(), woken by events like {@link #waiters} (kept apart: no allocation). */
    private volatile Thread reader;
    private volatile Thread writer;

    private volatile IOException failure;
    private volatile boolean closed;
    private volatile long peerFinalPos = -1;
    private volatile boolean writing;
    /** Whether a read is running: the ring may be provider memory that close() unmaps, so close waits for it. */
    private final AtomicInteger reading = new AtomicInteger();

    // receive side
    private ByteBuffer ring;
    private LocalRegion ringRegion;
    private final Object rx = new Object();
    /** Notified ring data, in stream order; guarded by rx. */
    private final Segments segments = new Segments();
    /** Message buffer of the reading thread (CREDIT). */
    private final ByteBuffer rxScratch = ByteBuffer.allocate(16);
    /** Zero-copy arrivals and cancel acknowledgements by advert sequence number; guarded by rx. */
    private final Map<Integer, Integer> zeroCopyArrived = new ConcurrentHashMap<>();
    private volatile int cancelAcked = -1;
    private long consumed;
    private long ringConsumed;
    private long creditSent;
    private int nextAdvertSeq;

    // send side
    private ByteBuffer staging;
    private LocalRegion stagingRegion;
    private RemoteRegion peerRing;
    private int peerRingSize;
    private int inlineMax;
    /** Message buffer of the writing thread (DATA, DATA_INLINE, CLOSE). */
    private ByteBuffer txScratch;
    private long pos;
    private long ringWritten;
    private long stagedFrom;
    private long stagedPos;
    private volatile long peerRingConsumed;
    private final AtomicReference<Advert> advert = new AtomicReference<>();
    private final AtomicInteger outstanding = new AtomicInteger();
    private final BooleanSupplier drained = () -> outstanding.get() == 0 || failure != null;
    private final OpCompletion directDone = new OpCompletion();
    private final BooleanSupplier directDoneOrFailed = () -> directDone.finished || failure != null;
    /** Whether large direct writes go straight into the peer's ring (the provider's writes are one-sided). */
    private boolean directRing;
    private final BooleanSupplier ringSpace = () -> peerRingSize - (ringWritten - peerRingConsumed) > 0
            || failure != null || peerFinalPos >= 0;
    /** Completion of control messages: only a failure matters. */
    private final Completion failOnError = new Completion() {
        @Override
        public void completed() {
        }

        @Override
        public void failed(IOException cause) {
            fail(cause);
        }
    };
    private final Completion ringCompletion = new Completion() {
        @Override
        public void completed() {
            outstanding.decrementAndGet();
            wake();
        }

        @Override
        public void failed(IOException cause) {
            // the failure first: a sync() that sees nothing outstanding must also see why
            fail(cause);
            outstanding.decrementAndGet();
        }
    };
    private RemoteRegion lastAdvertRegion;
    private volatile long zeroCopyBytes;

    private RegistrationCache cache;

    // remote memory
    private final AtomicInteger nextRegionId = new AtomicInteger(1);
    private final Map<Integer, Region> regions = new ConcurrentHashMap<>();
    private final Map<Integer, PeerRegion> peerRegions = new ConcurrentHashMap<>();
    private final Set<Long> acks = ConcurrentHashMap.newKeySet();

    /** A peer's advertised read buffer. */
    private record Advert(int seq, long pos, long address, int length, RegionDescriptor descriptor) {
    }

    Connection(Endpoint endpoint) {
        this.endpoint = endpoint;
        this.ringSize = endpoint.intSize(EndpointOption.RING_SIZE);
        this.zeroCopyThreshold = endpoint.intSize(EndpointOption.ZERO_COPY_THRESHOLD);
        this.readTimeoutNanos = endpoint.duration(EndpointOption.READ_TIMEOUT).toNanos();
        this.busyPollNanos = endpoint.duration(EndpointOption.BUSY_POLL).toNanos();
        this.handshakeTimeoutNanos = endpoint.duration(EndpointOption.HANDSHAKE_TIMEOUT).toNanos();
        this.budget = new Budget(endpoint.size(EndpointOption.MAX_REGISTERED));
        if (2L * ringSize > budget.limit()) {
            throw new IllegalArgumentException("bad endpoint '" + endpoint + "': ringSize "
                    + Units.formatSize(ringSize) + " needs " + Units.formatSize(2L * ringSize)
                    + " of registered memory (ring and staging), more than maxRegistered "
                    + Units.formatSize(budget.limit()));
        }
    }

    void attach(RdmaChannel ch) {
        this.channel = ch;
    }

    String peerName() {
        RdmaChannel ch = channel;
        return ch == null ? "unconnected" : ch.peerName();
    }

    Endpoint endpoint() {
        return endpoint;
    }

    long registeredBytes() {
        return budget.used();
    }

    /** Bytes this side wrote straight into the peer's advertised buffers. */
    long zeroCopyBytes() {
        return zeroCopyBytes;
    }

    // ---- handshake -------------------------------------------------------------------------------------------

    /** Client side: registers the ring, sends HELLO, waits for the peer's and validates it. */
    void clientHandshake(long deadline) throws IOException {
        setupRing();
        send(Wire.hello(ringRegion.descriptor()));
        await(() -> peerHello != null || failure != null, deadline, "handshake (connectTimeout)");
        if (peerHello == null) {
            throw new CommunicatorException("handshake with " + peerName() + " at " + endpoint + " failed: "
                    + failure.getMessage(), failure);
        }
        acceptPeerRing(Wire.parseHello(peerHello, peerName() + " (" + endpoint + ")"));
        established = true;
    }

    /** Makes {@code t} (the server's handshake thread) woken by this connection's events. */
    void watch(Thread t) {
        waiters.add(t);
    }

    void unwatch(Thread t) {
        waiters.remove(t);
    }

    boolean helloArrived() {
        return peerHello != null || failure != null;
    }

    /** Server side, once {@link #helloArrived()}: validates the client's HELLO, then replies with ours. */
    void serverHandshake() throws IOException {
        if (peerHello == null) {
            throw new CommunicatorException("connection from " + peerName() + " failed before its handshake: "
                    + failure.getMessage(), failure);
        }
        RegionDescriptor peerRingDescriptor = Wire.parseHello(peerHello, peerName());
        setupRing();
        acceptPeerRing(peerRingDescriptor);
        send(Wire.hello(ringRegion.descriptor()));
        established = true;
    }

    private void setupRing() throws IOException {
        if (!budget.tryReserve(ringSize)) {
            throw new CommunicatorException("ringSize " + Units.formatSize(ringSize) + " exceeds maxRegistered");
        }
        RegisteredBuffer rb = channel.allocate(ringSize, EnumSet.of(Access.REMOTE_WRITE));
        ring = rb.buffer();
        ringRegion = rb.region();
        cache = new RegistrationCache(channel, budget);
    }

    private void acceptPeerRing(RegionDescriptor d) throws IOException {
        if (!d.access().contains(Access.REMOTE_WRITE) || d.length() <= 0 || d.length() > Integer.MAX_VALUE - 8) {
            throw new HandshakeException("handshake from " + peerName() + ": unusable receive ring " + d
                    + " (needs remote write and a length of 1 byte to 2g)");
        }
        peerRingSize = (int) d.length();
        if (!budget.tryReserve(peerRingSize)) {
            throw new HandshakeException("handshake from " + peerName() + ": the peer's ring of "
                    + Units.formatSize(peerRingSize) + " needs a staging buffer beyond maxRegistered "
                    + Units.formatSize(budget.limit()));
        }
        staging = ByteBuffer.allocateDirect(peerRingSize);
        advertising = endpoint.isSet(EndpointOption.ZERO_COPY_THRESHOLD) || channel.placesWritesDirectly();
        directRing = channel.writesAreOneSided() && DIRECT_RING_ENABLED;
        inlineMax = Math.max(0, Math.min(INLINE_MAX, channel.maxMessageSize() - Wire.DATA_INLINE_HEADER));
        txScratch = ByteBuffer.allocate(Wire.DATA_INLINE_HEADER + inlineMax);
        stagingRegion = channel.register(staging, Set.of());
        peerRing = channel.unpack(d);
    }

    // ---- stream ----------------------------------------------------------------------------------------------

    int read(ByteBuffer dst) throws IOException {
        if (!dst.hasRemaining()) {
            return 0;
        }
        reading.incrementAndGet();
        try {
            return readRing(dst);
        } finally {
            reading.decrementAndGet();
        }
    }

    private int readRing(ByteBuffer dst) throws IOException {
        long start = System.nanoTime();
        long deadline = readTimeoutNanos > 0 ? start + readTimeoutNanos : 0;
        long spinEnd = start + busyPollNanos;
        Advert mine = null;
        RegistrationCache.Entry mineEntry = null;
        boolean cancelling = false;
        reader = Thread.currentThread();
        try {
            while (true) {
                if (closed) {
                    throw new AsynchronousCloseException();
                }
                if (mine != null) {
                    Integer n = zeroCopyArrived.remove(mine.seq());
                    if (n != null) {
                        dst.position(dst.position() + n);
                        consumed += n;
                        return n;
                    }
                }
                boolean ready;
                synchronized (rx) {
                    ready = !segments.isEmpty() && segments.firstPos() == consumed;
                }
                if (ready) {
                    return copyFromRing(dst);
                }
                if (peerFinalPos >= 0 && consumed >= peerFinalPos) {
                    return -1;
                }
                if (failure != null) {
                    throw new CommunicatorException("read from " + peerName() + " failed: " + failure.getMessage(),
                            failure);
                }
                if (cancelling && cancelAcked == mine.seq()) {
                    throw timeout("read", readTimeoutNanos);
                }
                if (advertising && mine == null && !cancelling && dst.remaining() >= zeroCopyThreshold
                        && dst.isDirect()) {
                    mineEntry = cache.acquire(dst);
                    if (mineEntry != null) {
                        mine = advertise(dst, mineEntry);
                    }
                }
                long now = System.nanoTime();
                if (deadline != 0 && now - deadline >= 0) {
                    if (mine == null) {
                        throw timeout("read", readTimeoutNanos);
                    }
                    if (cancelling) {
                        LOG.warn("{}: peer {} did not answer the cancellation of advert {} in time", endpoint,
                                peerName(), mine.seq());
                        throw timeout("read", readTimeoutNanos);
                    }
                    // the peer may be writing into dst right now: take the advert back before giving up
                    cancelling = true;
                    deadline = now + CANCEL_GRACE_NANOS;
                    send(ByteBuffer.allocate(5).put(Wire.CANCEL).putInt(mine.seq()).flip());
                }
                if (busyPollNanos > 0 && now - spinEnd < 0) {
                    if (!channel.poll()) {
                        Thread.onSpinWait();
                    }
                    continue;
                }
                pause(now, deadline);
            }
        } finally {
            if (mineEntry != null) {
                cache.release(mineEntry);
            }
            reader = null;
        }
    }

    private Advert advertise(ByteBuffer dst, RegistrationCache.Entry entry) throws IOException {
        int seq = nextAdvertSeq++;
        long address = entry.region.address() + dst.position();
        Advert a = new Advert(seq, consumed, address, dst.remaining(), entry.region.descriptor());
        RegionDescriptor d = a.descriptor();
        ByteBuffer m = ByteBuffer.allocate(1 + 4 + 8 + 8 + 8 + 4 + d.encodedLength());
        m.put(Wire.ADVERT).putInt(seq).putLong(consumed).putLong(ringConsumed).putLong(address)
                .putInt(dst.remaining());
        d.writeTo(m);
        creditSent = ringConsumed;
        send(m.flip());
        return a;
    }

    private int copyFromRing(ByteBuffer dst) {
        long cursor;
        int length;
        synchronized (rx) {
            cursor = segments.firstCursor();
            length = segments.firstLength();
        }
        int off = (int) (cursor % ringSize);
        int n = Math.min(dst.remaining(), length);
        dst.put(dst.position(), ring, off, n);
        dst.position(dst.position() + n);
        synchronized (rx) {
            segments.consume(n);
        }
        consumed += n;
        ringConsumed += n;
        if (ringConsumed - creditSent >= ringSize / 2) {
            creditSent = ringConsumed;
            send(rxScratch.clear().put(Wire.CREDIT).putLong(ringConsumed).flip());
        }
        return n;
    }

    void write(ByteBuffer src) throws IOException {
        writing = true;
        writer = Thread.currentThread();
        try {
            while (src.hasRemaining()) {
                checkWritable();
                Advert a = advert.get();
                if (a != null && a.pos() == pos && src.isDirect() && advert.compareAndSet(a, null)
                        && zeroCopy(src, a)) {
                    continue;
                }
                long free = peerRingSize - (ringWritten - peerRingConsumed);
                if (free == 0) {
                    flushStaged();
                    long deadline = readTimeoutNanos > 0 ? System.nanoTime() + readTimeoutNanos : 0;
                    await(ringSpace, deadline, "write (waiting for the reader; readTimeout)");
                    continue;
                }
                int off = (int) (ringWritten % peerRingSize);
                int n = (int) Math.min(src.remaining(), Math.min(free, peerRingSize - off));
                if (directRing && src.isDirect() && n >= DIRECT_RING_MIN && directRingWrite(src, off, n)) {
                    continue;
                }
                staging.put(off, src, src.position(), n);
                src.position(src.position() + n);
                ringWritten += n;
                pos += n;
                if (ringWritten - stagedFrom >= Math.min(MAX_FLUSH_CHUNK, peerRingSize / 4)) {
                    flushStaged();
                }
            }
        } finally {
            writing = false;
            writer = null;
        }
    }

    /**
     * Writes {@code n} bytes of a direct {@code src} straight into the peer's ring at {@code off}, skipping the
     * staging copy, and waits until the provider is done with {@code src} (write() may not return before). False
     * if {@code src} cannot be registered: the caller stages it instead.
     */
    private boolean directRingWrite(ByteBuffer src, int off, int n) throws IOException {
        RegistrationCache.Entry e = cache.acquire(src);
        if (e == null) {
            return false;
        }
        try {
            flushStaged();
            directDone.reset();
            channel.write(e.region, e.region.address() + src.position(), peerRing,
                    peerRing.descriptor().address() + off, n, dataNote(pos, ringWritten, n), directDone);
            if (!directDone.finished) {
                await(directDoneOrFailed, 0, "write");
            }
            directDone.check("write to " + peerName());
            src.position(src.position() + n);
            ringWritten += n;
            pos += n;
            stagedFrom = ringWritten;
            stagedPos = pos;
            return true;
        } finally {
            cache.release(e);
        }
    }

    private boolean zeroCopy(ByteBuffer src, Advert a) throws IOException {
        flushStaged();
        RegistrationCache.Entry e = cache.acquire(src);
        if (e == null) {
            return false;
        }
        try {
            RemoteRegion target = lastAdvertRegion;
            if (target == null || !target.descriptor().equals(a.descriptor())) {
                if (target != null) {
                    target.close();
                }
                target = channel.unpack(a.descriptor());
                lastAdvertRegion = target;
            }
            int n = Math.min(src.remaining(), a.length());
            ByteBuffer note = ByteBuffer.allocate(17).put(Wire.ZDATA).putInt(a.seq()).putLong(pos).putInt(n).flip();
            OpCompletion done = new OpCompletion();
            channel.write(e.region, e.region.address() + src.position(), target, a.address(), n, note, done);
            await(() -> done.finished || failure != null, 0, "zero-copy write");
            done.check("zero-copy write to " + peerName());
            src.position(src.position() + n);
            pos += n;
            stagedPos = pos;
            zeroCopyBytes += n;
            return true;
        } finally {
            cache.release(e);
        }
    }

    private void flushStaged() {
        while (stagedFrom < ringWritten) {
            int off = (int) (stagedFrom % peerRingSize);
            int n = (int) Math.min(ringWritten - stagedFrom, peerRingSize - off);
            outstanding.incrementAndGet();
            if (n <= inlineMax) {
                ByteBuffer m = txScratch.clear().put(Wire.DATA_INLINE).putLong(stagedPos).putLong(stagedFrom)
                        .putInt(n);
                m.put(m.position(), staging, off, n).position(m.position() + n);
                channel.send(m.flip(), ringCompletion);
            } else {
                channel.write(stagingRegion, stagingRegion.address() + off, peerRing,
                        peerRing.descriptor().address() + off, n, dataNote(stagedPos, stagedFrom, n), ringCompletion);
            }
            stagedFrom += n;
            stagedPos += n;
        }
    }

    /** The DATA notification of a ring write, in the writing thread's message buffer. */
    private ByteBuffer dataNote(long streamPos, long ringCursor, int n) {
        return txScratch.clear().put(Wire.DATA).putLong(streamPos).putLong(ringCursor).putInt(n).flip();
    }

    void sync() throws IOException {
        writing = true;
        writer = Thread.currentThread();
        try {
            checkWritable();
            flushStaged();
            long deadline = readTimeoutNanos > 0 ? System.nanoTime() + readTimeoutNanos : 0;
            await(drained, deadline, "sync (readTimeout)");
            checkWritable();
        } finally {
            writing = false;
            writer = null;
        }
    }

    private void checkWritable() throws IOException {
        if (closed) {
            throw new AsynchronousCloseException();
        }
        if (failure != null) {
            throw new CommunicatorException("write to " + peerName() + " failed: " + failure.getMessage(), failure);
        }
        if (peerFinalPos >= 0) {
            throw new CommunicatorException("write to " + peerName() + " failed: the peer closed the connection");
        }
    }

    // ---- remote memory ---------------------------------------------------------------------------------------

    MemoryRegion register(ByteBuffer buffer, Set<Access> access) throws IOException {
        if (!buffer.isDirect()) {
            throw new IllegalArgumentException("only direct buffers can be registered, got a heap buffer");
        }
        if (access.isEmpty()) {
            throw new IllegalArgumentException("empty access set: give REMOTE_READ, REMOTE_WRITE or both");
        }
        if (buffer.isReadOnly() && access.contains(Access.REMOTE_WRITE)) {
            throw new IllegalArgumentException("a read-only buffer cannot be registered for REMOTE_WRITE");
        }
        checkUsable();
        ByteBuffer view = buffer.slice();
        if (!budget.tryReserve(view.capacity())) {
            throw new CommunicatorException("registering " + view.capacity() + " bytes on " + endpoint
                    + " would exceed maxRegistered " + Units.formatSize(budget.limit()) + " ("
                    + budget.used() + " bytes registered)");
        }
        LocalRegion lr;
        try {
            lr = channel.register(view, access);
        } catch (IOException | RuntimeException e) {
            budget.release(view.capacity());
            throw e;
        }
        int id = nextRegionId.getAndIncrement();
        RegionDescriptor pd = lr.descriptor();
        byte[] pk = pd.key();
        byte[] key = ByteBuffer.allocate(4 + pk.length).putInt(id).put(pk).array();
        RegionDescriptor d = new RegionDescriptor(pd.address(), pd.length(), access, key);
        Region r = new Region(id, view, lr, d);
        regions.put(id, r);
        ByteBuffer m = ByteBuffer.allocate(5 + d.encodedLength()).put(Wire.ANNOUNCE).putInt(id);
        d.writeTo(m);
        try {
            send(m.flip());
            awaitAck(Wire.ANNOUNCE, id, "registration");
        } catch (IOException | RuntimeException e) {
            r.close();
            throw e;
        }
        return r;
    }

    private static long ackKey(byte type, int id) {
        return ((long) type << 32) | (id & 0xffffffffL);
    }

    private void awaitAck(byte type, int id, String what) throws IOException {
        long key = ackKey(type, id);
        await(() -> acks.contains(key) || failure != null, System.nanoTime() + handshakeTimeoutNanos,
                "waiting for " + peerName() + " to acknowledge a " + what + " (handshakeTimeout)");
        if (!acks.remove(key)) {
            throw new CommunicatorException(what + " of a region on " + endpoint + " failed: "
                    + failure.getMessage(), failure);
        }
    }

    void put(ByteBuffer src, RegionDescriptor remote, long offset) throws IOException {
        oneSided(remote, offset, src, Access.REMOTE_WRITE);
    }

    void get(RegionDescriptor remote, long offset, ByteBuffer dst) throws IOException {
        oneSided(remote, offset, dst, Access.REMOTE_READ);
    }

    private void oneSided(RegionDescriptor remote, long offset, ByteBuffer local, Access needed)
            throws IOException {
        checkUsable();
        PeerRegion pr = resolve(remote);
        int n = local.remaining();
        pr.announced.checkAccess(offset, n, needed);
        synchronized (pr) {
            if (pr.revoked) {
                throw new RemoteAccessException("region " + remote + " of " + peerName() + " was deregistered");
            }
            pr.inflight++;
        }
        try {
            if (n == 0) {
                return;
            }
            RemoteRegion rr = pr.unpacked(channel);
            ByteBuffer buf = local.isDirect() && !local.isReadOnly() ? local : null;
            ByteBuffer bounce = null;
            if (buf == null) {
                bounce = ByteBuffer.allocateDirect(n);
                if (needed == Access.REMOTE_WRITE) {
                    bounce.put(local.duplicate()).flip();
                }
            }
            ByteBuffer target = bounce != null ? bounce : buf;
            RegistrationCache.Entry e = cache.acquire(target);
            LocalRegion temp = null;
            if (e == null) {
                temp = channel.register(target, Set.of());
            }
            try {
                LocalRegion lr = e != null ? e.region : temp;
                long localAddress = lr.address() + (bounce != null ? 0 : local.position());
                long remoteAddress = pr.announced.address() + offset;
                OpCompletion done = new OpCompletion();
                if (needed == Access.REMOTE_WRITE) {
                    channel.write(lr, localAddress, rr, remoteAddress, n, null, done);
                } else {
                    channel.read(rr, remoteAddress, lr, localAddress, n, done);
                }
                await(() -> done.finished || failure != null, 0, needed == Access.REMOTE_WRITE ? "put" : "get");
                done.check((needed == Access.REMOTE_WRITE ? "put into " : "get from ") + remote + " of "
                        + peerName());
            } finally {
                if (e != null) {
                    cache.release(e);
                }
                if (temp != null) {
                    temp.close();
                }
                waiters.remove(Thread.currentThread());
            }
            if (needed == Access.REMOTE_READ && bounce != null) {
                local.duplicate().put(bounce);
            }
            local.position(local.limit());
        } finally {
            boolean ack;
            synchronized (pr) {
                pr.inflight--;
                ack = pr.revoked && pr.inflight == 0;
            }
            if (ack) {
                ackRevoke(pr.id);
            }
        }
    }

    private PeerRegion resolve(RegionDescriptor remote) throws RemoteAccessException {
        byte[] key = remote.key();
        PeerRegion pr = key.length >= 4 ? peerRegions.get(ByteBuffer.wrap(key).getInt()) : null;
        if (pr == null || !pr.announced.equals(remote)) {
            throw new RemoteAccessException("unknown remote key for region " + remote + ": " + peerName()
                    + " has registered no such region on this connection");
        }
        return pr;
    }

    private void ackRevoke(int id) {
        send(ByteBuffer.allocate(6).put(Wire.ACK).put(Wire.REVOKE).putInt(id).flip());
    }

    /** A region of this side, registered for the peer. */
    private final class Region implements MemoryRegion {
        private final int id;
        private final ByteBuffer buffer;
        private final LocalRegion local;
        private final RegionDescriptor descriptor;
        private boolean released;

        Region(int id, ByteBuffer buffer, LocalRegion local, RegionDescriptor descriptor) {
            this.id = id;
            this.buffer = buffer;
            this.local = local;
            this.descriptor = descriptor;
        }

        @Override
        public ByteBuffer buffer() {
            return buffer.duplicate().clear();
        }

        @Override
        public RegionDescriptor descriptor() {
            return descriptor;
        }

        @Override
        public void close() {
            synchronized (this) {
                if (released) {
                    return;
                }
                released = true;
            }
            regions.remove(id);
            if (established && !closed && failure == null) {
                // the peer must stop using the key before the memory stops being registered
                try {
                    send(ByteBuffer.allocate(5).put(Wire.REVOKE).putInt(id).flip());
                    awaitAck(Wire.REVOKE, id, "deregistration");
                } catch (IOException e) {
                    LOG.warn("{}: deregistering region {} without the acknowledgement of {}: {}", endpoint,
                            descriptor, peerName(), e.getMessage());
                }
            }
            local.close();
            budget.release(buffer.capacity());
        }
    }

    /** A region the peer registered for this side. */
    private static final class PeerRegion {
        final int id;
        final RegionDescriptor announced;
        final RegionDescriptor provider;
        RemoteRegion unpacked;
        int inflight;
        boolean revoked;

        PeerRegion(int id, RegionDescriptor announced) {
            this.id = id;
            this.announced = announced;
            byte[] k = announced.key();
            this.provider = new RegionDescriptor(announced.address(), announced.length(), announced.access(),
                    Arrays.copyOfRange(k, 4, k.length));
        }

        synchronized RemoteRegion unpacked(RdmaChannel ch) throws IOException {
            if (unpacked == null) {
                unpacked = ch.unpack(provider);
            }
            return unpacked;
        }

        synchronized void release() {
            if (unpacked != null) {
                unpacked.close();
                unpacked = null;
            }
        }
    }

    // ---- events ----------------------------------------------------------------------------------------------

    @Override
    public void onMessage(ByteBuffer message) {
        if (peerHello == null) {
            ByteBuffer copy = ByteBuffer.allocate(message.remaining()).put(message.duplicate()).flip();
            peerHello = copy;
            wake();
            return;
        }
        try {
            dispatch(message);
        } catch (BufferUnderflowException | IllegalArgumentException | IndexOutOfBoundsException e) {
            fail(new CommunicatorException("malformed message from " + peerName() + " (" + e.getMessage() + "): "
                    + Wire.describe(message), e));
        }
    }

    /** Handles one message; reads {@code m} by absolute index only (the provider may reuse the buffer). */
    private void dispatch(ByteBuffer msg) {
        ByteBuffer m = msg.duplicate();
        byte type = m.get();
        switch (type) {
            case Wire.DATA, Wire.DATA_INLINE -> {
                long p = m.getLong();
                long cursor = m.getLong();
                int n = m.getInt();
                checkSegment(cursor, n);
                if (type == Wire.DATA_INLINE) {
                    if (m.remaining() != n) {
                        throw new IllegalArgumentException("DATA_INLINE of " + n + " bytes carries " + m.remaining());
                    }
                    // the ring space is the writer's by the credit protocol: no reader touches it until the segment
                    ring.put((int) (cursor % ringSize), m, m.position(), n);
                }
                synchronized (rx) {
                    segments.add(p, cursor, n);
                }
            }
            case Wire.CREDIT -> credit(m.getLong());
            case Wire.ADVERT -> {
                int seq = m.getInt();
                long p = m.getLong();
                credit(m.getLong());
                long address = m.getLong();
                int length = m.getInt();
                advert.set(new Advert(seq, p, address, length, RegionDescriptor.readFrom(m)));
            }
            case Wire.ZDATA -> {
                int seq = m.getInt();
                m.getLong();
                zeroCopyArrived.put(seq, m.getInt());
            }
            case Wire.CANCEL -> {
                int seq = m.getInt();
                Advert a = advert.get();
                if (a != null && a.seq() == seq && advert.compareAndSet(a, null)) {
                    send(ByteBuffer.allocate(5).put(Wire.CANCEL_ACK).putInt(seq).flip());
                }
            }
            case Wire.CANCEL_ACK -> cancelAcked = m.getInt();
            case Wire.CLOSE -> {
                peerFinalPos = m.getLong();
                send(ByteBuffer.allocate(6).put(Wire.ACK).put(Wire.CLOSE).putInt(0).flip());
            }
            case Wire.ANNOUNCE -> {
                int id = m.getInt();
                RegionDescriptor d = RegionDescriptor.readFrom(m);
                if (d.key().length < 4) {
                    throw new IllegalArgumentException("announced region without an id");
                }
                peerRegions.put(id, new PeerRegion(id, d));
                send(ByteBuffer.allocate(6).put(Wire.ACK).put(Wire.ANNOUNCE).putInt(id).flip());
            }
            case Wire.REVOKE -> {
                int id = m.getInt();
                PeerRegion pr = peerRegions.remove(id);
                boolean ack = true;
                if (pr != null) {
                    synchronized (pr) {
                        pr.revoked = true;
                        ack = pr.inflight == 0;
                    }
                    pr.release();
                }
                if (ack) {
                    ackRevoke(id);
                }
            }
            case Wire.ACK -> {
                byte what = m.get();
                acks.add(ackKey(what, m.getInt()));
            }
            default -> throw new IllegalArgumentException("unknown message type " + type);
        }
        wake();
    }

    /** A ring segment the peer notified must lie inside the ring without wrapping. */
    private void checkSegment(long cursor, int n) {
        if (cursor < 0 || n <= 0 || (cursor % ringSize) + n > ringSize) {
            throw new IllegalArgumentException("ring segment of " + n + " bytes at cursor " + cursor
                    + " outside the " + ringSize + "-byte ring");
        }
    }

    private void credit(long value) {
        if (value > peerRingConsumed) {
            peerRingConsumed = value;
        }
    }

    @Override
    public void onError(IOException cause) {
        fail(cause);
    }

    private void fail(IOException cause) {
        if (failure == null) {
            failure = cause;
        }
        wake();
    }

    private void wake() {
        Thread t = reader;
        if (t != null) {
            LockSupport.unpark(t);
        }
        t = writer;
        if (t != null) {
            LockSupport.unpark(t);
        }
        if (!waiters.isEmpty()) {
            for (Thread w : waiters) {
                LockSupport.unpark(w);
            }
        }
    }

    private void send(ByteBuffer message) {
        channel.send(message, failOnError);
    }

    private void checkUsable() throws IOException {
        if (closed) {
            throw new ClosedChannelException();
        }
        if (failure != null) {
            throw new CommunicatorException("connection to " + peerName() + " failed: " + failure.getMessage(),
                    failure);
        }
    }

    private SocketTimeoutException timeout(String what, long nanos) {
        return new SocketTimeoutException(what + " from " + peerName() + " on " + endpoint + " timed out after "
                + Units.formatDuration(java.time.Duration.ofNanos(nanos)));
    }

    /** Waits until {@code ready} holds, spinning for busyPoll first; deadline 0 waits without limit. */
    private void await(BooleanSupplier ready, long deadline, String what) throws IOException {
        if (ready.getAsBoolean()) {
            return;
        }
        long spinEnd = System.nanoTime() + busyPollNanos;
        Thread me = Thread.currentThread();
        // the reader and writer threads are woken through their own fields
        boolean listed = me != reader && me != writer;
        if (listed) {
            waiters.add(me);
        }
        try {
            while (!ready.getAsBoolean()) {
                if (closed) {
                    throw new AsynchronousCloseException();
                }
                long now = System.nanoTime();
                if (deadline != 0 && now - deadline >= 0) {
                    throw new SocketTimeoutException(what + " with " + peerName() + " on " + endpoint
                            + " timed out");
                }
                if (busyPollNanos > 0 && now - spinEnd < 0) {
                    if (!channel.poll()) {
                        Thread.onSpinWait();
                    }
                    continue;
                }
                pause(now, deadline);
            }
        } finally {
            if (listed) {
                waiters.remove(me);
            }
        }
    }

    /** Parks until woken; the caller registered in {@link #waiters} before it last checked its condition. */
    private void pause(long now, long deadline) throws java.io.InterruptedIOException {
        if (Thread.currentThread().isInterrupted()) {
            throw new java.io.InterruptedIOException("interrupted while waiting on " + peerName() + " ("
                    + endpoint + ")");
        }
        if (busyPollNanos > 0) {
            channel.pollingEnded();
        }
        long nanos = deadline == 0 ? PARK_MAX_NANOS : Math.min(PARK_MAX_NANOS, deadline - now);
        if (nanos > 0) {
            LockSupport.parkNanos(this, nanos);
        }
    }

    // ---- close -----------------------------------------------------------------------------------------------

    /**
     * Closes the connection: unless a writer is active, first delivers staged bytes and announces the end of the
     * stream (bounded by the read timeout, or a few seconds), then releases the channel and every registration.
     */
    void close() {
        if (closed) {
            return;
        }
        RdmaChannel ch = channel;
        if (established && !writing && failure == null && ch != null) {
            try {
                flushStaged();
                long bound = readTimeoutNanos > 0 ? readTimeoutNanos : CLOSE_FLUSH_DEFAULT_NANOS;
                long deadline = System.nanoTime() + bound;
                await(drained, deadline, "close");
                if (failure == null) {
                    send(ByteBuffer.allocate(9).put(Wire.CLOSE).putLong(pos).flip());
                    // UCX tells the peer of a closed endpoint on another path than the messages (the connection
                    // manager's socket vs the shared-memory FIFO), so the end of the connection could overtake
                    // the last messages: close the channel only once the peer has processed CLOSE
                    long key = ackKey(Wire.CLOSE, 0);
                    await(() -> acks.contains(key) || failure != null, deadline, "close (waiting for the peer)");
                }
            } catch (IOException | RuntimeException e) {
                LOG.debug("{}: bytes not delivered before close: {}", endpoint, e.toString());
            } finally {
                waiters.remove(Thread.currentThread());
            }
        }
        closed = true;
        wake();
        long deadline = System.nanoTime() + CLOSE_FLUSH_DEFAULT_NANOS;
        while (reading.get() > 0 && System.nanoTime() - deadline < 0) {
            LockSupport.parkNanos(this, TimeUnit.MILLISECONDS.toNanos(1));
        }
        if (reading.get() > 0) {
            LOG.warn("{}: a read on {} did not leave within 3 s of close", endpoint, peerName());
        }
        if (ch != null) {
            ch.close();
        }
        releaseAll();
    }

    private void releaseAll() {
        for (Region r : regions.values()) {
            regions.remove(r.id);
            synchronized (r) {
                r.released = true;
            }
            r.local.close();
            budget.release(r.buffer.capacity());
        }
        for (PeerRegion pr : peerRegions.values()) {
            pr.release();
        }
        peerRegions.clear();
        if (lastAdvertRegion != null) {
            lastAdvertRegion.close();
        }
        if (peerRing != null) {
            peerRing.close();
        }
        if (cache != null) {
            cache.close();
        }
        if (ringRegion != null) {
            ringRegion.close();
            budget.release(ringSize);
            ringRegion = null;
        }
        if (stagingRegion != null) {
            stagingRegion.close();
            budget.release(peerRingSize);
            stagingRegion = null;
        }
    }

    /** Completion of one operation a caller waits for. */
    private final class OpCompletion implements Completion {
        volatile boolean finished;
        volatile IOException error;

        /** Makes this completion reusable for the next operation (the previous one has finished). */
        void reset() {
            error = null;
            finished = false;
        }

        @Override
        public void completed() {
            finished = true;
            wake();
        }

        @Override
        public void failed(IOException cause) {
            error = cause;
            finished = true;
            wake();
        }

        void check(String what) throws IOException {
            IOException e = error;
            if (e instanceof RemoteAccessException r) {
                throw new RemoteAccessException(what + ": " + r.getMessage());
            }
            if (e != null) {
                throw new CommunicatorException(what + " failed: " + e.getMessage(), e);
            }
        }
    }
}
