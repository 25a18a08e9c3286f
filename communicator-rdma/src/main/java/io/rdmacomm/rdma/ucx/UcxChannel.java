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

    /** Reports a UCX request's outcome to a completion exactly once, keeping native buffers reachable till then. */
    private final class Callback extends UcxCallback {
        private final Completion done;
        private final String what;
        private final AtomicBoolean reported = new AtomicBoolean();
        @SuppressWarnings("unused")
        private final Object[] keepAlive;
        private final ByteBuffer thenNotify;
        private volatile boolean tracked;

        Callback(Completion done, String what, ByteBuffer thenNotify, Object... keepAlive) {
            this.done = done;
            this.what = what;
            this.thenNotify = thenNotify;
            this.keepAlive = keepAlive;
        }

        /** Counts this callback's request as in flight on the worker until it reports. */
        Callback track() {
            tracked = true;
            loop.begin();
            return this;
        }

        @Override
        public void onSuccess(UcpRequest request) {
            if (reported.compareAndSet(false, true)) {
                if (tracked) {
                    loop.end();
                }
                if (thenNotify != null) {
                    sendAm(WorkerLoop.AM_CONTROL, header(0), thenNotify, 0, 0, null);
                }
                done.completed();
            }
        }

        @Override
        public void onError(int status, String message) {
            fail(new CommunicatorException(what + " on the connection to " + peerName + " failed: " + message,
                    status, null));
        }

        void fail(IOException e) {
            if (reported.compareAndSet(false, true)) {
                if (tracked) {
                    loop.end();
                }
                done.failed(e);
            }
        }
    }

    private static final Completion IGNORE = new Completion() {
        @Override
        public void completed() {
        }

        @Override
        public void failed(IOException cause) {
        }
    };

    private ByteBuffer header(int extra) {
        return ByteBuffer.allocateDirect(4 + extra).order(ByteOrder.BIG_ENDIAN).putInt(remoteId);
    }

    private static ByteBuffer direct(ByteBuffer message) {
        return ByteBuffer.allocateDirect(Math.max(1, message.remaining())).put(message.duplicate()).flip();
    }

    @Override
    public void send(ByteBuffer message, Completion done) {
        ByteBuffer data = direct(message);
        Callback cb = new Callback(done, "send", null, data);
        if (!usable(cb)) {
            return;
        }
        sendAm(WorkerLoop.AM_CONTROL, header(0), data, UcxUtils.getAddress(data), message.remaining(), cb);
    }

    /** Sends an active message; {@code header} is positioned at its end. */
    private void sendAm(int amId, ByteBuffer header, ByteBuffer dataBuffer, long dataAddress, long dataLength,
            Callback cb) {
        ByteBuffer h = header.flip();
        long data = dataBuffer != null && dataAddress == 0 ? UcxUtils.getAddress(dataBuffer) : dataAddress;
        long length = dataBuffer != null && dataAddress == 0 ? dataBuffer.remaining() : dataLength;
        Callback c = cb != null ? cb : new Callback(IGNORE, "control message", null, dataBuffer);
        Callback keeping = new Callback(new Completion() {
            @Override
            public void completed() {
                c.onSuccess(null);
            }

            @Override
            public void failed(IOException cause) {
                if (cb == null) {
                    failConnection(cause);
                }
                c.fail(cause);
            }
        }, "active message", null, h, dataBuffer);
        try {
            ep.sendAmNonBlocking(amId, UcxUtils.getAddress(h), h.remaining(), data, length, 0, keeping.track(),
                    HOST);
        } catch (RuntimeException e) {
            keeping.fail(new CommunicatorException("active message to " + peerName + " failed: " + e.getMessage(),
                    e));
        }
    }

    @Override
    public void write(LocalRegion src, long srcAddress, RemoteRegion dst, long dstAddress, int length,
            ByteBuffer notification, Completion done) {
        ByteBuffer note = notification == null ? null : direct(notification);
        if (eager) {
            int noteLength = note == null ? 0 : note.remaining();
            ByteBuffer h = header(WRITE_HEADER - 4 + noteLength).putLong(dstAddress).putInt(length);
            if (note != null) {
                h.put(note.duplicate());
            }
            Callback cb = new Callback(done, "write", null, src);
            if (!usable(cb)) {
                return;
            }
            Callback flushed = new Callback(done, "write", null);
            sendAm(WorkerLoop.AM_WRITE, h, null, srcAddress, length, new Callback(new Completion() {
                @Override
                public void completed() {
                    flush(flushed);
                }

                @Override
                public void failed(IOException cause) {
                    cb.fail(cause);
                }
            }, "write", null, src));
            return;
        }
        Callback cb = new Callback(done, "write", note, src);
        if (!usable(cb)) {
            return;
        }
        try {
            ep.putNonBlocking(srcAddress, length, dstAddress, ((UcxRemote) dst).rkey, null, HOST);
        } catch (RuntimeException e) {
            cb.fail(new CommunicatorException("put to " + peerName + " failed: " + e.getMessage(), e));
            return;
        }
        flush(cb);
    }

    private void flush(Callback cb) {
        try {
            ep.flushNonBlocking(cb.track());
        } catch (RuntimeException e) {
            cb.fail(new CommunicatorException("flush to " + peerName + " failed: " + e.getMessage(), e));
        }
    }

    @Override
    public void read(RemoteRegion src, long srcAddress, LocalRegion dst, long dstAddress, int length,
            Completion done) {
        Callback cb = new Callback(done, "read", null, dst);
        if (!usable(cb)) {
            return;
        }
        try {
            ep.getNonBlocking(srcAddress, ((UcxRemote) src).rkey, dstAddress, length, cb.track(), HOST);
        } catch (RuntimeException e) {
            cb.fail(new CommunicatorException("get from " + peerName + " failed: " + e.getMessage(), e));
        }
    }

    private boolean usable(Callback cb) {
        if (closed.get()) {
            cb.fail(new CommunicatorException("the connection to " + peerName + " is closed"));
            return false;
        }
        IOException f = failure;
        if (f != null) {
            cb.fail(new CommunicatorException("the connection to " + peerName + " failed: " + f.getMessage(), f));
            return false;
        }
        return true;
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
