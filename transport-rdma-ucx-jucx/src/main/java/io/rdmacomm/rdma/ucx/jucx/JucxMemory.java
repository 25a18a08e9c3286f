package io.rdmacomm.rdma.ucx.jucx;

import io.rdmacomm.api.RegisteredMemory;
import io.rdmacomm.rdma.spi.RemoteRegion;
import io.rdmacomm.rdma.ucx.UcxMemory;
import java.nio.ByteBuffer;
import org.openucx.jucx.UcxUtils;
import org.openucx.jucx.ucp.UcpContext;
import org.openucx.jucx.ucp.UcpEndpoint;
import org.openucx.jucx.ucp.UcpMemMapParams;
import org.openucx.jucx.ucp.UcpMemory;
import org.openucx.jucx.ucp.UcpRemoteKey;

/**
 * The memory of one JUCX channel ({@link UcxMemory}): mapped with {@code UcpContext.memoryMap}, keys unpacked with
 * {@code UcpEndpoint.unpackRemoteKey}.
 */
final class JucxMemory extends UcxMemory<UcpEndpoint, UcpRemoteKey> {
    /** The process's count of this provider's regions (see {@link UcxMemory}). */
    private static final RegisteredMemory.Counter LIVE = RegisteredMemory.counter("ucx-jucx");
    private final UcpContext context;

    JucxMemory(UcpContext context, boolean withheld) {
        super(LIVE, withheld);
        this.context = context;
    }

    @Override
    protected long addressOf(ByteBuffer buffer) {
        // UcxUtils.getAddress adds the buffer's position; the region starts at index 0 whatever the position is
        return UcxUtils.getAddress(buffer.duplicate().position(0));
    }

    @Override
    protected Mapping map(ByteBuffer buffer, long address) {
        UcpMemory mem = context.memoryMap(new UcpMemMapParams().setAddress(address).setLength(buffer.capacity())
                .setMemoryType(JucxRuntime.HOST_MEMORY));
        return new Mapping(buffer, address, key(mem), mem::deregister);
    }

    @Override
    protected Mapping allocateMapped(int length) {
        UcpMemory mem = context.memoryMap(new UcpMemMapParams().allocate().setLength(length)
                .setMemoryType(JucxRuntime.HOST_MEMORY));
        return new Mapping(UcxUtils.getByteBufferView(mem.getAddress(), length), mem.getAddress(), key(mem),
                mem::deregister);
    }

    private static byte[] key(UcpMemory mem) {
        ByteBuffer packed = mem.getRemoteKeyBuffer();
        byte[] key = new byte[packed.remaining()];
        packed.get(key);
        return key;
    }

    @Override
    protected UcpRemoteKey unpackKey(UcpEndpoint ep, byte[] packedKey) {
        return ep.unpackRemoteKey(ByteBuffer.allocateDirect(packedKey.length).put(packedKey).flip());
    }

    @Override
    protected void releaseKey(UcpRemoteKey key) {
        key.close();
    }

    /** The unpacked key of {@code r}, or null (see {@link UcxMemory#keyOf}). */
    static UcpRemoteKey key(RemoteRegion r) {
        return (UcpRemoteKey) keyOf(r);
    }
}
