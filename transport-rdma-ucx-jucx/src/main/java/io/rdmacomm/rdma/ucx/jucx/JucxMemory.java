package io.rdmacomm.rdma.ucx.jucx;

import io.rdmacomm.api.Access;
import io.rdmacomm.api.CommunicatorException;
import io.rdmacomm.api.RegionDescriptor;
import io.rdmacomm.api.RegisteredMemory;
import io.rdmacomm.rdma.spi.LocalRegion;
import io.rdmacomm.rdma.spi.RegisteredBuffer;
import io.rdmacomm.rdma.spi.RemoteRegion;
import io.rdmacomm.rdma.ucx.UcxTransports;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import org.openucx.jucx.UcxUtils;
import org.openucx.jucx.ucp.UcpContext;
import org.openucx.jucx.ucp.UcpEndpoint;
import org.openucx.jucx.ucp.UcpMemMapParams;
import org.openucx.jucx.ucp.UcpMemory;
import org.openucx.jucx.ucp.UcpRemoteKey;

/**
 * The memory of one UCX channel: regions mapped for it ({@code ucp_mem_map} of application memory, or memory UCX
 * allocates) and the peer's regions whose keys were unpacked on its endpoint. Everything is released with the
 * channel at the latest. Where the node withholds one-sided access ({@link UcxTransports#oneSidedWithheld()}),
 * nothing is mapped: a region is only the bounds that incoming writes are checked against, its descriptor carries
 * no key, and the peer's descriptors are never unpacked (writes to them travel as active messages).
 */
final class JucxMemory {
    private static final byte[] NO_KEY = new byte[0];
    /**
     * The process's count of this provider's regions, mapped or (where one-sided access is withheld) bounds only,
     * receive rings and staging buffers included: from {@link #add} to the region's close.
     */
    private static final RegisteredMemory.Counter LIVE = RegisteredMemory.counter("ucx-jucx");
    private final UcpContext context;
    private final boolean withheld;
    private final Set<Region> regions = ConcurrentHashMap.newKeySet();
    private final Set<Remote> remotes = ConcurrentHashMap.newKeySet();

    JucxMemory(UcpContext context, boolean withheld) {
        this.context = context;
        this.withheld = withheld;
    }

    LocalRegion register(ByteBuffer buffer, Set<Access> access) throws IOException {
        if (!buffer.isDirect() || buffer.capacity() == 0) {
            throw new IllegalArgumentException("UCX registers non-empty direct buffers only");
        }
        // UcxUtils.getAddress adds the buffer's position; the region starts at index 0 whatever the position is
        long address = UcxUtils.getAddress(buffer.duplicate().position(0));
        if (withheld) {
            return add(new Region(buffer, null, new RegionDescriptor(address, buffer.capacity(), access, NO_KEY)));
        }
        UcpMemory mem;
        try {
            mem = context.memoryMap(new UcpMemMapParams().setAddress(address).setLength(buffer.capacity())
                    .setMemoryType(JucxRuntime.HOST_MEMORY));
        } catch (RuntimeException e) {
            throw new CommunicatorException("UCX could not register " + buffer.capacity() + " bytes: "
                    + e.getMessage(), e);
        }
        return add(new Region(buffer, mem, new RegionDescriptor(address, buffer.capacity(), access, key(mem))));
    }

    RegisteredBuffer allocate(int length, Set<Access> access) throws IOException {
        if (withheld) {
            ByteBuffer buffer = ByteBuffer.allocateDirect(length);
            return new RegisteredBuffer(buffer, register(buffer, access));
        }
        UcpMemory mem;
        try {
            mem = context.memoryMap(new UcpMemMapParams().allocate().setLength(length)
                    .setMemoryType(JucxRuntime.HOST_MEMORY));
        } catch (RuntimeException e) {
            throw new CommunicatorException("UCX could not allocate " + length + " bytes of registered memory: "
                    + e.getMessage(), e);
        }
        ByteBuffer buffer = UcxUtils.getByteBufferView(mem.getAddress(), length);
        return new RegisteredBuffer(buffer,
                add(new Region(buffer, mem, new RegionDescriptor(mem.getAddress(), length, access, key(mem)))));
    }

    private static byte[] key(UcpMemory mem) {
        ByteBuffer packed = mem.getRemoteKeyBuffer();
        byte[] key = new byte[packed.remaining()];
        packed.get(key);
        return key;
    }

    private Region add(Region r) {
        regions.add(r);
        LIVE.registered(r.length());
        return r;
    }

    /** Whether {@code length} bytes at {@code address} lie in one region registered here for remote write. */
    boolean acceptsWrite(long address, long length) {
        for (Region r : regions) {
            if (r.accepts(address, length)) {
                return true;
            }
        }
        return false;
    }

    RemoteRegion unpack(UcpEndpoint ep, RegionDescriptor descriptor) throws IOException {
        byte[] key = descriptor.key();
        if (withheld || key.length == 0) {
            return new Remote(descriptor, null);
        }
        ByteBuffer direct = ByteBuffer.allocateDirect(key.length).put(key).flip();
        UcpRemoteKey rkey;
        try {
            rkey = ep.unpackRemoteKey(direct);
        } catch (RuntimeException e) {
            throw new CommunicatorException("UCX could not unpack the remote key of " + descriptor + ": "
                    + e.getMessage(), e);
        }
        Remote r = new Remote(descriptor, rkey);
        remotes.add(r);
        return r;
    }

    /**
     * The unpacked key of a region {@link #unpack} returned; null where there is none (one-sided access withheld by
     * this node or by the peer, which sent no key): such a region is written with active messages and read through
     * the engine.
     */
    static UcpRemoteKey key(RemoteRegion r) {
        return ((Remote) r).rkey;
    }

    /** Releases the peer's keys: before the endpoint closes. */
    void releaseRemotes() {
        for (Remote r : remotes.toArray(new Remote[0])) {
            r.close();
        }
    }

    /** Deregisters every region: once the endpoint is closed. */
    void releaseRegions() {
        for (Region r : regions.toArray(new Region[0])) {
            r.close();
        }
    }

    /** Registered memory; kept reachable with its buffer so the memory outlives the registration. */
    private final class Region implements LocalRegion {
        private final ByteBuffer buffer;
        private final UcpMemory mem;
        private final RegionDescriptor descriptor;
        private final AtomicBoolean released = new AtomicBoolean();

        Region(ByteBuffer buffer, UcpMemory mem, RegionDescriptor descriptor) {
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
                if (mem != null) {
                    mem.deregister();
                }
                LIVE.released(buffer.capacity());
            }
        }
    }

    private final class Remote implements RemoteRegion {
        private final RegionDescriptor descriptor;
        private final UcpRemoteKey rkey;
        private final AtomicBoolean released = new AtomicBoolean();

        Remote(RegionDescriptor descriptor, UcpRemoteKey rkey) {
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
                if (rkey != null) {
                    rkey.close();
                }
            }
        }
    }
}
