package io.rdmacomm.rdma.ucx;

import io.rdmacomm.api.Access;
import io.rdmacomm.api.CommunicatorException;
import io.rdmacomm.api.RegionDescriptor;
import io.rdmacomm.api.RegisteredMemory;
import io.rdmacomm.rdma.spi.LocalRegion;
import io.rdmacomm.rdma.spi.RegisteredBuffer;
import io.rdmacomm.rdma.spi.RemoteRegion;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The memory of one UCX channel, as both UCX providers keep it: regions mapped for it ({@code ucp_mem_map} of
 * application memory, or memory UCX allocates) and the peer's regions whose keys were unpacked on its endpoint.
 * Everything is released with the channel at the latest. The regions are an array replaced on change, so that
 * checking an incoming write walks them without allocating. Where the node withholds one-sided access
 * ({@link UcxTransports#oneSidedWithheld()}), nothing is mapped: a region is only the bounds that incoming writes are
 * checked against, its descriptor carries no key, and the peer's descriptors are never unpacked (writes to them
 * travel as active messages). A provider says how its binding maps, allocates and unpacks.
 *
 * @param <E> the binding's endpoint type
 * @param <K> the binding's unpacked remote key type
 */
public abstract class UcxMemory<E, K> {
    private static final byte[] NO_KEY = new byte[0];

    /** Memory UCX mapped: where it is, its packed remote key and how to unmap it. */
    public record Mapping(ByteBuffer buffer, long address, byte[] packedKey, Runnable unmap) {
    }

    /**
     * The process's count of the provider's regions, mapped or (where one-sided access is withheld) bounds only,
     * receive rings and staging buffers included: from a region's registration to its close.
     */
    private final RegisteredMemory.Counter live;
    /** Whether the node withholds one-sided access from its peers: nothing is mapped, nothing unpacked. */
    protected final boolean withheld;
    private volatile Region[] regions = new Region[0];
    /** The peer's regions unpacked here; also the lock of their attachments. */
    private final List<Remote<K>> remotes = new ArrayList<>();

    /**
     * @param live the provider's count of live regions ({@link RegisteredMemory#counter})
     * @param withheld whether the node withholds one-sided access from its peers
     */
    protected UcxMemory(RegisteredMemory.Counter live, boolean withheld) {
        this.live = live;
        this.withheld = withheld;
    }

    /** The address of index 0 of the direct buffer {@code buffer}, whatever its position. */
    protected abstract long addressOf(ByteBuffer buffer);

    /** Maps {@code buffer} (at {@code address}) with UCX; a RuntimeException if UCX refuses. */
    protected abstract Mapping map(ByteBuffer buffer, long address);

    /** Memory of {@code length} bytes that UCX allocates and maps; a RuntimeException if UCX refuses. */
    protected abstract Mapping allocateMapped(int length);

    /**
     * A buffer of {@code length} bytes for {@link #allocate} where one-sided access is withheld, and the region of
     * it; by default a direct buffer registered as bounds only. A provider may hand out memory the peer maps instead.
     */
    protected RegisteredBuffer allocateWithheld(int length, Set<Access> access) throws IOException {
        ByteBuffer buffer = ByteBuffer.allocateDirect(length);
        return new RegisteredBuffer(buffer, register(buffer, access));
    }

    /** Unpacks the peer's packed remote key on {@code ep}; a RuntimeException if UCX refuses. */
    protected abstract K unpackKey(E ep, byte[] packedKey);

    /** Releases a key {@link #unpackKey} returned. */
    protected abstract void releaseKey(K key);

    /** Whether a descriptor's non-empty key is a UCX key to unpack (not something else the provider sends). */
    protected boolean isUcxKey(byte[] key) {
        return true;
    }

    /** Registers the direct, non-empty {@code buffer} for this channel (mapped unless one-sided access is withheld). */
    public final LocalRegion register(ByteBuffer buffer, Set<Access> access) throws IOException {
        if (!buffer.isDirect() || buffer.capacity() == 0) {
            throw new IllegalArgumentException("UCX registers non-empty direct buffers only");
        }
        long address = addressOf(buffer);
        if (withheld) {
            return addRegion(buffer, new RegionDescriptor(address, buffer.capacity(), access, NO_KEY), null);
        }
        Mapping m;
        try {
            m = map(buffer, address);
        } catch (RuntimeException e) {
            throw new CommunicatorException("UCX could not register " + buffer.capacity() + " bytes: "
                    + e.getMessage(), e);
        }
        return addRegion(buffer, new RegionDescriptor(m.address(), buffer.capacity(), access, m.packedKey()),
                m.unmap());
    }

    /** A registered buffer of {@code length} bytes for this channel. */
    public final RegisteredBuffer allocate(int length, Set<Access> access) throws IOException {
        if (withheld) {
            return allocateWithheld(length, access);
        }
        Mapping m;
        try {
            m = allocateMapped(length);
        } catch (RuntimeException e) {
            throw new CommunicatorException("UCX could not allocate " + length + " bytes of registered memory: "
                    + e.getMessage(), e);
        }
        ByteBuffer buffer = m.buffer();
        return new RegisteredBuffer(buffer, addRegion(buffer,
                new RegionDescriptor(m.address(), buffer.capacity(), access, m.packedKey()), m.unmap()));
    }

    /**
     * Keeps {@code buffer}, described by {@code descriptor}, as a region of this channel; {@code release} (or null)
     * runs when it is closed.
     */
    protected final synchronized LocalRegion addRegion(ByteBuffer buffer, RegionDescriptor descriptor,
            Runnable release) {
        Region r = new Region(this, buffer, descriptor, release);
        Region[] next = Arrays.copyOf(regions, regions.length + 1);
        next[next.length - 1] = r;
        regions = next;
        live.registered(r.length());
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
    public final boolean acceptsWrite(long address, long length) {
        for (Region r : regions) {
            if (r.accepts(address, length)) {
                return true;
            }
        }
        return false;
    }

    /** The peer's region {@code descriptor} on endpoint {@code ep}, with its key unpacked if it has one to unpack. */
    public final RemoteRegion unpack(E ep, RegionDescriptor descriptor) throws IOException {
        byte[] key = descriptor.key();
        K rkey = null;
        if (!withheld && key.length > 0 && isUcxKey(key)) {
            try {
                rkey = unpackKey(ep, key);
            } catch (RuntimeException e) {
                throw new CommunicatorException("UCX could not unpack the remote key of " + descriptor + ": "
                        + e.getMessage(), e);
            }
        }
        Remote<K> r = new Remote<>(this, descriptor, rkey);
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
    protected static Object keyOf(RemoteRegion r) {
        return ((Remote<?>) r).rkey;
    }

    /** Something a provider makes for a peer's region, given the descriptor. */
    @FunctionalInterface
    protected interface Attachment<T extends AutoCloseable> {
        /** Makes it for {@code descriptor}. */
        T make(RegionDescriptor descriptor) throws IOException;
    }

    /**
     * Attaches to the peer's region {@code r} what {@code attachment} makes (closed with the region), unless the
     * region is released or has one already: then null.
     */
    protected final <T extends AutoCloseable> T attach(RemoteRegion r, Attachment<T> attachment) throws IOException {
        Remote<?> remote = (Remote<?>) r;
        synchronized (remotes) {
            if (remote.released.get() || remote.attached != null) {
                return null;
            }
            T made = attachment.make(remote.descriptor);
            remote.attached = made;
            return made;
        }
    }

    /** Releases the peer's keys: before the endpoint closes. */
    public final void releaseRemotes() {
        List<Remote<K>> all;
        synchronized (remotes) {
            all = new ArrayList<>(remotes);
        }
        for (Remote<K> r : all) {
            r.close();
        }
    }

    /** Deregisters every region: once the endpoint is closed. */
    public final void releaseRegions() {
        for (Region r : regions) {
            r.close();
        }
    }

    /** Registered memory; keeps its buffer reachable so the memory outlives the registration. */
    private static final class Region implements LocalRegion {
        private final UcxMemory<?, ?> owner;
        private final ByteBuffer buffer;
        private final RegionDescriptor descriptor;
        /** Unmaps the memory, or closes what the peer maps; null for bounds only. */
        private final Runnable release;
        private final AtomicBoolean released = new AtomicBoolean();

        Region(UcxMemory<?, ?> owner, ByteBuffer buffer, RegionDescriptor descriptor, Runnable release) {
            this.owner = owner;
            this.buffer = buffer;
            this.descriptor = descriptor;
            this.release = release;
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
                owner.removeRegion(this);
                if (release != null) {
                    release.run();
                }
                owner.live.released(buffer.capacity());
            }
        }
    }

    private static final class Remote<K> implements RemoteRegion {
        private final UcxMemory<?, K> owner;
        private final RegionDescriptor descriptor;
        private final K rkey;
        /** What the provider attached ({@link UcxMemory#attach}), or null; guarded by the owner's remotes. */
        private AutoCloseable attached;
        private final AtomicBoolean released = new AtomicBoolean();

        Remote(UcxMemory<?, K> owner, RegionDescriptor descriptor, K rkey) {
            this.owner = owner;
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
                AutoCloseable a;
                synchronized (owner.remotes) {
                    owner.remotes.remove(this);
                    a = attached;
                }
                if (rkey != null) {
                    owner.releaseKey(rkey);
                }
                if (a != null) {
                    try {
                        a.close();
                    } catch (Exception e) {
                        throw new IllegalStateException("closing what was attached to " + descriptor, e);
                    }
                }
            }
        }
    }
}
