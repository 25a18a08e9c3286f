package io.rdmacomm.rdma.ucx;

import io.rdmacomm.api.Access;
import io.rdmacomm.api.CommunicatorException;
import io.rdmacomm.api.RegionDescriptor;
import io.rdmacomm.rdma.spi.ChannelHandler;
import io.rdmacomm.rdma.spi.Completion;
import io.rdmacomm.rdma.spi.LocalRegion;
import io.rdmacomm.rdma.spi.RdmaChannel;
import io.rdmacomm.rdma.spi.RegisteredBuffer;
import io.rdmacomm.rdma.spi.RemoteRegion;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;
import org.openucx.jucx.UcxCallback;
import org.openucx.jucx.UcxUtils;
import org.openucx.jucx.ucp.UcpAmData;
import org.openucx.jucx.ucp.UcpEndpoint;
import org.openucx.jucx.ucp.UcpMemMapParams;
import org.openucx.jucx.ucp.UcpMemory;
import org.openucx.jucx.ucp.UcpRemoteKey;
import org.openucx.jucx.ucp.UcpRequest;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A channel on one UCP endpoint. Active message headers start with the receiver's channel id (0 on a client's
 * own worker); a write's active message also carries the destination address, length and notification.
 */
final class UcxChannel implements RdmaChannel {
    private static final Logger LOG = LoggerFactory.getLogger(UcxChannel.class);
    /** UCS_MEMORY_TYPE_HOST: the ByteBuffer overloads pass a memory type libucp 1.13 misreads. */
    private static final int HOST = 0;
    private static final long CLOSE_WAIT_NANOS = TimeUnit.SECONDS.toNanos(2);
    private static final int WRITE_HEADER = 4 + 8 + 4;

    private final WorkerLoop loop;
    private final int id;
    private final String peerName;
    private final boolean eager;
    volatile UcpEndpoint ep;
    volatile ChannelHandler handler;
    volatile int remoteId = -1;
    private volatile IOException failure;
    private final AtomicBoolean closed = new AtomicBoolean();
    private final Set<UcxRegion> regions = ConcurrentHashMap.newKeySet();
    private final Set<UcxRemote> remotes = ConcurrentHashMap.newKeySet();
    volatile Thread connectWaiter;

    UcxChannel(WorkerLoop loop, int id, String peerName, boolean eager) {
        this.loop = loop;
        this.id = id;
        this.peerName = peerName;
        this.eager = eager;
    }

    @Override
    public String peerName() {
        return peerName;
    }

    IOException failure() {
        return failure;
    }

    // ---- memory ----------------------------------------------------------------------------------------------

    @Override
    public LocalRegion register(ByteBuffer buffer, Set<Access> access) throws IOException {
        if (!buffer.isDirect() || buffer.capacity() == 0) {
            throw new IllegalArgumentException("UCX registers non-empty direct buffers only");
        }
        // UcxUtils.getAddress adds the buffer's position; the region starts at index 0 whatever the position is
        long address = UcxUtils.getAddress(buffer.duplicate().position(0));
        UcpMemory mem;
        try {
            mem = loop.context.memoryMap(new UcpMemMapParams().setAddress(address).setLength(buffer.capacity())
                    .setMemoryType(HOST));
        } catch (RuntimeException e) {
            throw new CommunicatorException("UCX could not register " + buffer.capacity() + " bytes: "
                    + e.getMessage(), e);
        }
        ByteBuffer packed = mem.getRemoteKeyBuffer();
        byte[] key = new byte[packed.remaining()];
        packed.get(key);
        UcxRegion r = new UcxRegion(buffer, mem, new RegionDescriptor(address, buffer.capacity(), access, key));
        regions.add(r);
        return r;
    }

    @Override
    public RegisteredBuffer allocate(int length, Set<Access> access) throws IOException {
        UcpMemory mem;
        try {
            mem = loop.context.memoryMap(new UcpMemMapParams().allocate().setLength(length).setMemoryType(HOST));
        } catch (RuntimeException e) {
            throw new CommunicatorException("UCX could not allocate " + length + " bytes of registered memory: "
                    + e.getMessage(), e);
        }
        ByteBuffer buffer = UcxUtils.getByteBufferView(mem.getAddress(), length);
        ByteBuffer packed = mem.getRemoteKeyBuffer();
        byte[] key = new byte[packed.remaining()];
        packed.get(key);
        UcxRegion r = new UcxRegion(buffer, mem, new RegionDescriptor(mem.getAddress(), length, access, key));
        regions.add(r);
        return new RegisteredBuffer(buffer, r);
    }

    /** Registered memory; kept reachable with its buffer so the memory outlives the registration. */
    private final class UcxRegion implements LocalRegion {
        private final ByteBuffer buffer;
        private final UcpMemory mem;
        private final RegionDescriptor descriptor;
        private final AtomicBoolean released = new AtomicBoolean();

        UcxRegion(ByteBuffer buffer, UcpMemory mem, RegionDescriptor descriptor) {
            this.buffer = buffer;
            this.mem = mem;
            this.descriptor = descriptor;
        }

        @Override
        public long address() {
            return descriptor.address();
        }

        @Override
        public long length() {
            return buffer.capacity();
        }

        @Override
        public RegionDescriptor descriptor() {
            return descriptor;
        }

        boolean accepts(long address, long length) {
            return !released.get() && descriptor.access().contains(Access.REMOTE_WRITE)
                    && address >= descriptor.address() && length >= 0
                    && address + length <= descriptor.address() + descriptor.length();
        }

        @Override
        public void close() {
            if (released.compareAndSet(false, true)) {
                regions.remove(this);
                mem.deregister();
            }
        }
    }

    @Override
    public boolean writesAreOneSided() {
        return !eager;
    }

    @Override
    public boolean placesWritesDirectly() {
        return !eager && UcxRuntime.rdmaDevicePresent();
    }

    @Override
    public RemoteRegion unpack(RegionDescriptor descriptor) throws IOException {
        checkOpen();
        byte[] key = descriptor.key();
        ByteBuffer direct = ByteBuffer.allocateDirect(key.length).put(key).flip();
        UcpRemoteKey rkey;
        try {
            rkey = ep.unpackRemoteKey(direct);
        } catch (RuntimeException e) {
            throw new CommunicatorException("UCX could not unpack the remote key of " + descriptor + ": "
                    + e.getMessage(), e);
        }
        UcxRemote r = new UcxRemote(descriptor, rkey);
        remotes.add(r);
        return r;
    }

    private final class UcxRemote implements RemoteRegion {
        private final RegionDescriptor descriptor;
        final UcpRemoteKey rkey;
        private final AtomicBoolean released = new AtomicBoolean();

        UcxRemote(RegionDescriptor descriptor, UcpRemoteKey rkey) {
            this.descriptor = descriptor;
            this.rkey = rkey;
        }

        @Override
        public RegionDescriptor descriptor() {
            return descriptor;
        }

        @Override
        public void close() {
            if (released.compareAndSet(false, true)) {
                remotes.remove(this);
                rkey.close();
            }
        }
    }

    // ---- operations ------------------------------------------------------------------------------------------

    @Override
    public int maxMessageSize() {
        return 64 * 1024;
    }

    /**
     * A message in flight: direct memory holding the receiver id, header and (small) payload of one active message,
     * which is also the JUCX callback of the requests that carry it. Pooled per channel, so the steady state issues
     * UCX requests without allocating memory of its own (JUCX itself allocates a request object per operation).
     */
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
            return mem.clear().putInt(remoteId);
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
                    am(this, WorkerLoop.AM_CONTROL, address, 4, address + 4, amLength - 4);
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

        private synchronized int generation() {
            return generation;
        }

        @Override
        public void onError(int status, String message) {
            fail(generation(), new CommunicatorException(what + " on the connection to " + peerName + " failed: "
                    + message, status, null));
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
                failConnection(e);
            } else {
                d.failed(e);
            }
        }
    }

    private static final int SLOT_SIZE = 2048;
    private static final int SLOTS = 32;
    private final Slot[] freeSlots = new Slot[SLOTS];
    private int freeCount;

    {
        ByteBuffer slab = ByteBuffer.allocateDirect(SLOT_SIZE * SLOTS);
        for (int i = 0; i < SLOTS; i++) {
            freeSlots[freeCount++] = new Slot(slab.slice(i * SLOT_SIZE, SLOT_SIZE), true);
        }
    }

    /** A free slot of at least {@code size} bytes: pooled if one is free and large enough, else a new one. */
    private Slot slot(int size) {
        if (size <= SLOT_SIZE) {
            synchronized (freeSlots) {
                if (freeCount > 0) {
                    return freeSlots[--freeCount];
                }
            }
        }
        return new Slot(ByteBuffer.allocateDirect(Math.max(size, SLOT_SIZE)), false);
    }

    private void release(Slot s) {
        s.done = null;
        if (s.pooled) {
            synchronized (freeSlots) {
                freeSlots[freeCount++] = s;
            }
        }
    }

    /** Issues an active message whose header (receiver id first) and data lie at the given addresses. */
    private void am(Slot s, int amId, long headerAddress, int headerLength, long dataAddress, long dataLength) {
        int gen = s.issue();
        loop.track();
        UcpRequest r;
        try {
            r = ep.sendAmNonBlocking(amId, headerAddress, headerLength, dataAddress, dataLength, 0, s, HOST);
        } catch (RuntimeException e) {
            s.fail(gen, new CommunicatorException("active message to " + peerName + " failed: " + e.getMessage(), e));
            return;
        }
        loop.issued(r);
    }

    private void flush(Slot s) {
        int gen = s.issue();
        loop.track();
        UcpRequest r;
        try {
            r = ep.flushNonBlocking(s);
        } catch (RuntimeException e) {
            s.fail(gen, new CommunicatorException("flush to " + peerName + " failed: " + e.getMessage(), e));
            return;
        }
        loop.issued(r);
    }

    @Override
    public void send(ByteBuffer message, Completion done) {
        int n = message.remaining();
        Slot s = slot(4 + n);
        s.start(Slot.SEND, done, "send").put(message.duplicate());
        if (!usable(s)) {
            return;
        }
        am(s, WorkerLoop.AM_CONTROL, s.address, 4, s.address + 4, n);
    }

    @Override
    public void write(LocalRegion src, long srcAddress, RemoteRegion dst, long dstAddress, int length,
            ByteBuffer notification, Completion done) {
        int noteLength = notification == null ? 0 : notification.remaining();
        if (eager) {
            Slot s = slot(WRITE_HEADER + noteLength);
            ByteBuffer h = s.start(Slot.EAGER_WRITE, done, "write").putLong(dstAddress).putInt(length);
            if (notification != null) {
                h.put(notification.duplicate());
            }
            if (!usable(s)) {
                return;
            }
            am(s, WorkerLoop.AM_WRITE, s.address, h.position(), srcAddress, length);
            return;
        }
        Slot s = slot(4 + noteLength);
        ByteBuffer m = s.start(Slot.PUT_FLUSH, done, "write");
        if (notification != null) {
            m.put(notification.duplicate());
        }
        s.amLength = m.position();
        if (notification == null) {
            s.stage = Slot.FLUSH;
        }
        if (!usable(s)) {
            return;
        }
        try {
            // JUCX allocates a request per put; a put carries no callback: the flush reports it
            ep.putNonBlocking(srcAddress, length, dstAddress, ((UcxRemote) dst).rkey, null, HOST);
        } catch (RuntimeException e) {
            int gen = s.issue();
            loop.track();
            s.fail(gen, new CommunicatorException("put to " + peerName + " failed: " + e.getMessage(), e));
            return;
        }
        flush(s);
    }

    @Override
    public void read(RemoteRegion src, long srcAddress, LocalRegion dst, long dstAddress, int length,
            Completion done) {
        Slot s = slot(0);
        s.start(Slot.SEND, done, "read");
        if (!usable(s)) {
            return;
        }
        int gen = s.issue();
        loop.track();
        UcpRequest r;
        try {
            r = ep.getNonBlocking(srcAddress, ((UcxRemote) src).rkey, dstAddress, length, s, HOST);
        } catch (RuntimeException e) {
            s.fail(gen, new CommunicatorException("get from " + peerName + " failed: " + e.getMessage(), e));
            return;
        }
        loop.issued(r);
    }

    /** Whether operations may be issued; if not, fails {@code s}'s completion (without issuing) and frees it. */
    private boolean usable(Slot s) {
        IOException f = null;
        if (closed.get()) {
            f = new CommunicatorException("the connection to " + peerName + " is closed");
        } else if (failure != null) {
            f = new CommunicatorException("the connection to " + peerName + " failed: " + failure.getMessage(),
                    failure);
        }
        if (f == null) {
            return true;
        }
        Completion d = s.done;
        release(s);
        d.failed(f);
        return false;
    }

    private void checkOpen() throws IOException {
        if (closed.get()) {
            throw new CommunicatorException("the connection to " + peerName + " is closed");
        }
    }

    @Override
    public boolean poll() {
        try {
            return loop.pollFromApplication();
        } catch (Exception e) {
            return false;
        }
    }

    @Override
    public void pollingEnded() {
        loop.pollingEnded();
    }

    // ---- events ----------------------------------------------------------------------------------------------

    /** An active message for this channel, on the progress thread. */
    void onAm(int type, ByteBuffer header, UcpAmData data) {
        if (closed.get()) {
            return;
        }
        switch (type) {
            case WorkerLoop.AM_ID -> {
                remoteId = header.getInt(4);
                Thread t = connectWaiter;
                if (t != null) {
                    LockSupport.unpark(t);
                }
            }
            case WorkerLoop.AM_CONTROL -> {
                if (data.isDataValid()) {
                    deliver(UcxUtils.getByteBufferView(data.getDataAddress(), data.getLength()));
                } else {
                    ByteBuffer into = ByteBuffer.allocateDirect((int) data.getLength());
                    data.receive(UcxUtils.getAddress(into), new UcxCallback() {
                        @Override
                        public void onSuccess(UcpRequest request) {
                            deliver(into);
                        }

                        @Override
                        public void onError(int status, String message) {
                            failConnection(new CommunicatorException("receiving a message from " + peerName
                                    + " failed: " + message, status, null));
                        }
                    });
                }
            }
            case WorkerLoop.AM_WRITE -> onWrite(header, data);
            default -> LOG.warn("unknown active message {} from {}", type, peerName);
        }
    }

    private void onWrite(ByteBuffer header, UcpAmData data) {
        long dst = header.getLong(4);
        int length = header.getInt(12);
        ByteBuffer note = header.duplicate().position(WRITE_HEADER);
        ByteBuffer noteCopy = note.hasRemaining()
                ? ByteBuffer.allocate(note.remaining()).put(note).flip() : null;
        if (data.getLength() != length || regions.stream().noneMatch(r -> r.accepts(dst, length))) {
            failConnection(new CommunicatorException(peerName + " wrote " + length + " bytes at 0x"
                    + Long.toHexString(dst) + " outside any region registered for remote write"));
            return;
        }
        if (data.isDataValid()) {
            UcxUtils.getByteBufferView(dst, length).put(UcxUtils.getByteBufferView(data.getDataAddress(), length));
            if (noteCopy != null) {
                deliver(noteCopy);
            }
        } else {
            data.receive(dst, new UcxCallback() {
                @Override
                public void onSuccess(UcpRequest request) {
                    if (noteCopy != null) {
                        deliver(noteCopy);
                    }
                }

                @Override
                public void onError(int status, String message) {
                    failConnection(new CommunicatorException("receiving a write from " + peerName + " failed: "
                            + message, status, null));
                }
            });
        }
    }

    private void deliver(ByteBuffer message) {
        ChannelHandler h = handler;
        if (h != null && !closed.get()) {
            h.onMessage(message);
        }
    }

    void onEpError(UcpEndpoint endpoint, int status, String message) {
        failConnection(new CommunicatorException("connection to " + peerName + " failed: " + message
                + " (UCX status " + status + ")", status, null));
    }

    private void failConnection(IOException cause) {
        if (failure != null) {
            return;
        }
        failure = cause;
        Thread t = connectWaiter;
        if (t != null) {
            LockSupport.unpark(t);
        }
        ChannelHandler h = handler;
        if (h != null && !closed.get()) {
            h.onError(cause);
        }
    }

    private static boolean waitFor(UcpRequest req) {
        long deadline = System.nanoTime() + CLOSE_WAIT_NANOS;
        while (!req.isCompleted() && System.nanoTime() - deadline < 0) {
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
        }
        return req.isCompleted();
    }

    // ---- close -----------------------------------------------------------------------------------------------

    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        for (UcxRemote r : remotes.toArray(new UcxRemote[0])) {
            r.close();
        }
        UcpEndpoint e = ep;
        if (e != null) {
            loop.begin();
            try {
                // a flush-close of an endpoint that cannot flush (never connected, peer gone) stays pending
                // forever and then trips an assertion in ucp_worker_destroy: flush first, force if that hangs
                boolean flushed = false;
                if (failure == null && remoteId >= 0) {
                    try {
                        UcpRequest flush = e.flushNonBlocking(null);
                        flushed = waitFor(flush) && failure == null;
                    } catch (RuntimeException ex) {
                        LOG.debug("flushing the endpoint to {}: {}", peerName, ex.toString());
                    }
                }
                UcpRequest req = flushed ? e.closeNonBlockingFlush() : e.closeNonBlockingForce();
                if (!waitFor(req)) {
                    LOG.warn("closing the endpoint to {} did not complete within {} ms", peerName,
                            TimeUnit.NANOSECONDS.toMillis(CLOSE_WAIT_NANOS));
                }
            } catch (RuntimeException ex) {
                LOG.debug("closing the endpoint to {}: {}", peerName, ex.toString());
            } finally {
                loop.end();
            }
        }
        for (UcxRegion r : regions.toArray(new UcxRegion[0])) {
            r.close();
        }
        loop.remove(id);
        loop.release();
    }
}
