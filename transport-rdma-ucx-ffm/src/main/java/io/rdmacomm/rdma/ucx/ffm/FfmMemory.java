package io.rdmacomm.rdma.ucx.ffm;

import io.rdmacomm.api.Access;
import io.rdmacomm.api.RegionDescriptor;
import io.rdmacomm.api.RegisteredMemory;
import io.rdmacomm.api.support.RateLimitedLog;
import io.rdmacomm.rdma.spi.MappedRing;
import io.rdmacomm.rdma.spi.RegisteredBuffer;
import io.rdmacomm.rdma.spi.RemoteRegion;
import io.rdmacomm.rdma.ucx.UcxMemory;
import io.rdmacomm.rdma.ucx.UcxTransports;
import io.rdmacomm.ucx.ffm.UcpContext;
import io.rdmacomm.ucx.ffm.UcpEndpoint;
import io.rdmacomm.ucx.ffm.UcpMemory;
import io.rdmacomm.ucx.ffm.UcpRemoteKey;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The memory of one ucx-ffm channel ({@link UcxMemory}): mapped through the {@code ucx-ffm} binding and, where the
 * node withholds one-sided access, receive buffers that are {@link SharedRing}s the peer maps (if UCX may use shared
 * memory) or {@link LazyMemory}.
 */
final class FfmMemory extends UcxMemory<UcpEndpoint, UcpRemoteKey> {
    private static final Logger LOG = LoggerFactory.getLogger(FfmMemory.class);
    /** Adverts that name something other than a ring of this user that is free for a writer: a hostile peer. */
    private static final RateLimitedLog REFUSED = new RateLimitedLog(LOG);
    /** The process's count of this provider's regions (see {@link UcxMemory}). */
    private static final RegisteredMemory.Counter LIVE = RegisteredMemory.counter("ucx-ffm");
    private final UcpContext context;

    FfmMemory(UcpContext context, boolean withheld) {
        super(LIVE, withheld);
        this.context = context;
    }

    @Override
    protected long addressOf(ByteBuffer buffer) {
        return MemorySegment.ofBuffer(buffer.duplicate().clear()).address();
    }

    @Override
    protected Mapping map(ByteBuffer buffer, long address) {
        UcpMemory mem = context.register(MemorySegment.ofBuffer(buffer.duplicate().clear()));
        return new Mapping(buffer, mem.address(), mem.packRemoteKey(), mem::close);
    }

    @Override
    protected Mapping allocateMapped(int length) {
        UcpMemory mem = context.allocate(length);
        return new Mapping(mem.segment().asByteBuffer(), mem.address(), mem.packRemoteKey(), mem::close);
    }

    /**
     * A {@link SharedRing} the peer maps, where UCX may use shared memory and one can be made; else memory not mapped
     * by UCX, whose pages are resident only once written (an idle connection holds none).
     */
    @Override
    protected RegisteredBuffer allocateWithheld(int length, Set<Access> access) throws IOException {
        if (SharedRing.offered(UcxTransports.sharedMemoryAllowed())) {
            SharedRing shared = null;
            try {
                shared = SharedRing.create(length);
            } catch (IOException | RuntimeException | LinkageError e) {
                LOG.debug("no shared ring ({}): the peer's writes come as active messages", e.toString());
            }
            if (shared != null) {
                ByteBuffer buffer = shared.ring();
                MemorySegment segment = MemorySegment.ofBuffer(buffer);
                return new RegisteredBuffer(buffer, addRegion(buffer,
                        new RegionDescriptor(segment.address(), length, access, shared.advert()), shared::close),
                        shared.control());
            }
        }
        ByteBuffer buffer = LazyMemory.allocate(length);
        return new RegisteredBuffer(buffer, register(buffer, access));
    }

    /** A shared ring's advert is no UCX key (a trusting node's peer trusts too and sends none; never unpack one). */
    @Override
    protected boolean isUcxKey(byte[] key) {
        return !SharedRing.isAdvert(key);
    }

    @Override
    protected UcpRemoteKey unpackKey(UcpEndpoint ep, byte[] packedKey) {
        return ep.unpackRemoteKey(packedKey);
    }

    @Override
    protected void releaseKey(UcpRemoteKey key) {
        key.close();
    }

    /** The unpacked key of {@code r}, or null (see {@link UcxMemory#keyOf}). */
    static UcpRemoteKey key(RemoteRegion r) {
        return (UcpRemoteKey) keyOf(r);
    }

    /**
     * The peer's ring of {@code r} mapped into this process, or null: only where this node withholds one-sided
     * access, UCX may use shared memory, and the descriptor's key is the advert of a {@link SharedRing} on this host
     * that passes the writer's checks (otherwise the writes travel as active messages; a refused advert is logged).
     */
    MappedRing map(RemoteRegion r, String peerName) {
        RegionDescriptor d = r.descriptor();
        if (!withheld || !SharedRing.isAdvert(d.key()) || !SharedRing.offered(UcxTransports.sharedMemoryAllowed())
                || d.length() > Integer.MAX_VALUE) {
            return null;
        }
        SharedRing mapped;
        try {
            mapped = attach(r, descriptor -> SharedRing.map(descriptor.key(), (int) descriptor.length()));
        } catch (SharedRing.Refused e) {
            REFUSED.warn("refusing the shared ring advertised by {}: {}; this side's writes go as active messages",
                    peerName, e.getMessage());
            return null;
        } catch (IOException | RuntimeException | LinkageError e) {
            LOG.debug("not mapping the ring of {}: {}", peerName, e.getMessage());
            return null;
        }
        return mapped == null ? null : new MappedRing(mapped.ring(), mapped.control());
    }
}
