package io.rdmacomm.rdma.ucx.ffm;

import io.rdmacomm.api.Access;
import io.rdmacomm.api.CommunicatorException;
import io.rdmacomm.api.RegionDescriptor;
import io.rdmacomm.api.RegisteredMemory;
import io.rdmacomm.api.support.RateLimitedLog;
import io.rdmacomm.rdma.spi.LocalRegion;
import io.rdmacomm.rdma.spi.MappedRing;
import io.rdmacomm.rdma.spi.RegisteredBuffer;
import io.rdmacomm.rdma.spi.RemoteRegion;
import io.rdmacomm.rdma.ucx.UcxTransports;
import io.rdmacomm.ucx.ffm.UcpContext;
import io.rdmacomm.ucx.ffm.UcpEndpoint;
import io.rdmacomm.ucx.ffm.UcpMemory;
import io.rdmacomm.ucx.ffm.UcpRemoteKey;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The memory of one channel: regions mapped for it ({@code ucp_mem_map} of application memory, or memory UCX
 * allocates) and the peer's regions whose keys were unpacked on its endpoint. Everything is released with the
 * channel at the latest. The regions are an array replaced on change, so that checking an incoming write walks
 * them without allocating. Where the node withholds one-sided access ({@link UcxTransports#oneSidedWithheld()}),
 * nothing is mapped: a region is only the bounds that incoming writes are checked against, its descriptor carries
 * no key, and the peer's descriptors are never unpacked (writes to them travel as active messages).
 */
final class FfmMemory {
    private static final Logger LOG = LoggerFactory.getLogger(FfmMemory.class);
    /** Adverts that name something other than a ring of this user that is free for a writer: a hostile peer. */
    private static final RateLimitedLog REFUSED = new RateLimitedLog(LOG);
    private static final byte[] NO_KEY = new byte[0];
    /**
     * The process's count of this provider's regions, mapped or (where one-sided access is withheld) bounds only,
     * receive rings and staging buffers included: from {@link #add} to the region's close.
     */
    private static final RegisteredMemory.Counter LIVE = RegisteredMemory.counter("ucx-ffm");
    private final UcpContext context;
    private final boolean withheld;
    private volatile Region[] regions = new Region[0];
    private final List<Remote> remotes = new ArrayList<>();

    FfmMemory(UcpContext context, boolean withheld) {
        this.context = context;
        this.withheld = withheld;
    }

    LocalRegion register(ByteBuffer buffer, Set<Access> access) throws IOException {
        if (!buffer.isDirect() || buffer.capacity() == 0) {
            throw new IllegalArgumentException("UCX registers non-empty direct buffers only");
        }
        MemorySegment segment = MemorySegment.ofBuffer(buffer.duplicate().clear());
        if (withheld) {
            return add(new Region(buffer, null,
                    new RegionDescriptor(segment.address(), buffer.capacity(), access, NO_KEY)));
        }
        UcpMemory mem;
        try {
            mem = context.register(segment);
        } catch (RuntimeException e) {
            throw new CommunicatorException("UCX could not register " + buffer.capacity() + " bytes: "
                    + e.getMessage(), e);
        }
        return add(new Region(buffer, mem, access));
    }

    RegisteredBuffer allocate(int length, Set<Access> access) throws IOException {
        if (withheld && SharedRing.offered(UcxTransports.sharedMemoryAllowed())) {
            SharedRing shared = null;
            try {
                shared = SharedRing.create(length);
            } catch (IOException | RuntimeException | LinkageError e) {
                LOG.debug("no shared ring ({}): the peer's writes come as active messages", e.toString());
            }
            if (shared != null) {
                ByteBuffer buffer = shared.ring();
                MemorySegment segment = MemorySegment.ofBuffer(buffer);
                return new RegisteredBuffer(buffer, add(new Region(buffer, null,
                        new RegionDescriptor(segment.address(), length, access, shared.advert()), shared)),
                        shared.control());
            }
        }
        if (withheld) {
            // not mapped by UCX: pages resident only once written (an idle connection holds none)
            ByteBuffer buffer = LazyMemory.allocate(length);
            return new RegisteredBuffer(buffer, register(buffer, access));
        }
        UcpMemory mem;
        try {
            mem = context.allocate(length);
        } catch (RuntimeException e) {
            throw new CommunicatorException("UCX could not allocate " + length + " bytes of registered memory: "
                    + e.getMessage(), e);
        }
        ByteBuffer buffer = mem.segment().asByteBuffer();
        return new RegisteredBuffer(buffer, add(new Region(buffer, mem, access)));
    }

    private synchronized Region add(Region r) {
        Region[] next = Arrays.copyOf(regions, regions.length + 1);
        next[next.length - 1] = r;
        regions = next;
        LIVE.registered(r.length());
        return r;
    }

    private synchronized void removeRegion(Region r) {
        Region[] now = regions;
        int n = 0;
        Region[] next = new Region[now.length];
        for (Region x : now) {
            if (x != r) {
                next[n++] = x;
            }
        }
        regions = Arrays.copyOf(next, n);
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
        // a shared ring's advert is no UCX key (a trusting node's peer trusts too and sends none; never unpack one)
        if (withheld || descriptor.key().length == 0 || SharedRing.isAdvert(descriptor.key())) {
            Remote r = new Remote(descriptor, null);
            synchronized (remotes) {
                remotes.add(r);
            }
            return r;
        }
        UcpRemoteKey rkey;
        try {
            rkey = ep.unpackRemoteKey(descriptor.key());
        } catch (RuntimeException e) {
            throw new CommunicatorException("UCX could not unpack the remote key of " + descriptor + ": "
                    + e.getMessage(), e);
        }
        Remote r = new Remote(descriptor, rkey);
        synchronized (remotes) {
            remotes.add(r);
        }
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

    /**
     * The peer's ring of {@code r} mapped into this process, or null: only where this node withholds one-sided
     * access, UCX may use shared memory, and the descriptor's key is the advert of a {@link SharedRing} on this host
     * that passes the writer's checks (otherwise the writes travel as active messages; a refused advert is logged).
     */
    MappedRing map(RemoteRegion r, String peerName) {
        Remote remote = (Remote) r;
        byte[] key = remote.descriptor.key();
        if (!withheld || !SharedRing.isAdvert(key) || !SharedRing.offered(UcxTransports.sharedMemoryAllowed())
                || remote.descriptor.length() > Integer.MAX_VALUE) {
            return null;
        }
        synchronized (remotes) {
            if (remote.released.get() || remote.mapped != null) {
                return null;
            }
            try {
                remote.mapped = SharedRing.map(key, (int) remote.descriptor.length());
            } catch (SharedRing.Refused e) {
                REFUSED.warn("refusing the shared ring advertised by {}: {}; this side's writes go as active messages",
                        peerName, e.getMessage());
                return null;
            } catch (IOException | RuntimeException | LinkageError e) {
                LOG.debug("not mapping the ring of {}: {}", peerName, e.getMessage());
                return null;
            }
            return new MappedRing(remote.mapped.ring(), remote.mapped.control());
        }
    }

    /** Releases the peer's keys: before the endpoint closes. */
    void releaseRemotes() {
        Remote[] all;
        synchronized (remotes) {
            all = remotes.toArray(new Remote[0]);
        }
        for (Remote r : all) {
            r.close();
        }
    }

    /** Deregisters every region: once the endpoint is closed. */
    void releaseRegions() {
        for (Region r : regions) {
            r.close();
        }
    }

    /** Registered memory; keeps its buffer reachable so the memory outlives the registration. */
    private final class Region implements LocalRegion {
        private final ByteBuffer buffer;
        private final UcpMemory mem;
        private final RegionDescriptor descriptor;
        /** The shared memory of a ring the peer maps, or null. */
        private final SharedRing shared;
        private final AtomicBoolean released = new AtomicBoolean();

        Region(ByteBuffer buffer, UcpMemory mem, Set<Access> access) {
            this(buffer, mem, new RegionDescriptor(mem.address(), buffer.capacity(), access, mem.packRemoteKey()),
                    null);
        }

        Region(ByteBuffer buffer, UcpMemory mem, RegionDescriptor descriptor) {
            this(buffer, mem, descriptor, null);
        }

        Region(ByteBuffer buffer, UcpMemory mem, RegionDescriptor descriptor, SharedRing shared) {
            this.buffer = buffer;
            this.mem = mem;
            this.descriptor = descriptor;
            this.shared = shared;
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
                removeRegion(this);
                if (mem != null) {
                    mem.close();
                }
                if (shared != null) {
                    shared.close();
                }
                LIVE.released(buffer.capacity());
            }
        }
    }

    private final class Remote implements RemoteRegion {
        private final RegionDescriptor descriptor;
        private final UcpRemoteKey rkey;
        /** The peer's shared ring mapped here ({@link #map}), or null; guarded by {@code remotes}. */
        private SharedRing mapped;
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
                SharedRing m;
                synchronized (remotes) {
                    remotes.remove(this);
                    m = mapped;
                }
                if (rkey != null) {
                    rkey.close();
                }
                if (m != null) {
                    m.close();
                }
            }
        }
    }
}
