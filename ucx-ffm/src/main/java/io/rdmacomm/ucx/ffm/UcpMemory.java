package io.rdmacomm.ucx.ffm;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Memory registered with a context for RMA ({@code ucp_mem_h}), from {@link UcpContext#register} or
 * {@link UcpContext#allocate}. A peer reaches it through the key from {@link #packRemoteKey()} and the
 * addresses of {@link #segment()}.
 *
 * <p>Thread safety: safe to use from several threads once created; close it once, after the peers are
 * done with it.
 */
public final class UcpMemory implements AutoCloseable {
  private final UcpContext context;
  private final long handle;
  private final MemorySegment segment;
  private final Arena scope;
  private final AtomicBoolean closed = new AtomicBoolean();

  private UcpMemory(UcpContext context, long handle, MemorySegment segment, Arena scope) {
    this.context = context;
    this.handle = handle;
    this.segment = segment;
    this.scope = scope;
  }

  /**
   * {@code ucp_mem_map}. With {@code registered == null} libucp allocates ({@code UCP_MEM_MAP_ALLOCATE}) and
   * the returned segment is only valid until {@link #close()}.
   */
  static UcpMemory map(UcpContext context, long address, long length, MemorySegment registered) {
    try (Arena call = Arena.ofConfined()) {
      MemorySegment params = call.allocate(Structs.UCP_MEM_MAP_PARAMS);
      long mask = UcpConst.UCP_MEM_MAP_PARAM_FIELD_LENGTH;
      if (registered != null) {
        mask |= UcpConst.UCP_MEM_MAP_PARAM_FIELD_ADDRESS;
        params.set(ValueLayout.JAVA_LONG, Structs.offset(Structs.UCP_MEM_MAP_PARAMS, "address"), address);
      } else {
        mask |= UcpConst.UCP_MEM_MAP_PARAM_FIELD_FLAGS;
        params.set(ValueLayout.JAVA_INT, Structs.offset(Structs.UCP_MEM_MAP_PARAMS, "flags"),
            UcpConst.UCP_MEM_MAP_ALLOCATE);
      }
      params.set(ValueLayout.JAVA_LONG, 0, mask);
      params.set(ValueLayout.JAVA_LONG, Structs.offset(Structs.UCP_MEM_MAP_PARAMS, "length"), length);
      MemorySegment out = call.allocate(ValueLayout.JAVA_LONG);
      UcxException.check(Native.memMap(context.handle(), params.address(), out.address()), "ucp_mem_map");
      long memh = out.get(ValueLayout.JAVA_LONG, 0);
      if (registered != null) {
        return new UcpMemory(context, memh, registered, null);
      }
      MemorySegment attr = call.allocate(Structs.UCP_MEM_ATTR);
      attr.set(ValueLayout.JAVA_LONG, 0, UcpConst.UCP_MEM_ATTR_FIELD_ADDRESS | UcpConst.UCP_MEM_ATTR_FIELD_LENGTH);
      int s = Native.memQuery(memh, attr.address());
      if (s != UcpConst.UCS_OK) {
        Native.memUnmap(context.handle(), memh);
        throw new UcxException("ucp_mem_query", s);
      }
      // the caller asked for `length` bytes; UCX may round the mapping up, which is not the caller's to use
      long base = attr.get(ValueLayout.JAVA_LONG, Structs.offset(Structs.UCP_MEM_ATTR, "address"));
      Arena scope = Arena.ofShared();
      return new UcpMemory(context, memh, Memory.view(base, length, scope), scope);
    }
  }

  /** The registered memory; for allocated memory, a segment that becomes inaccessible on {@link #close()}. */
  public MemorySegment segment() {
    return segment;
  }

  /** Start address, as a peer addresses it in put/get. */
  public long address() {
    return segment.address();
  }

  /** Size in bytes. */
  public long size() {
    return segment.byteSize();
  }

  /** The remote key for peers to {@linkplain UcpEndpoint#unpackRemoteKey unpack} ({@code ucp_rkey_pack}). */
  public byte[] packRemoteKey() {
    checkOpen();
    try (Arena call = Arena.ofConfined()) {
      MemorySegment out = call.allocate(ValueLayout.JAVA_LONG, 2);
      UcxException.check(Native.rkeyPack(context.handle(), handle, out.address(), out.address() + 8), "ucp_rkey_pack");
      long buffer = out.getAtIndex(ValueLayout.JAVA_LONG, 0);
      try {
        return Memory.toBytes(buffer, out.getAtIndex(ValueLayout.JAVA_LONG, 1));
      } finally {
        Native.rkeyBufferRelease(buffer);
      }
    }
  }

  private void checkOpen() {
    if (closed.get()) {
      throw new IllegalStateException("memory unmapped");
    }
  }

  /** {@code ucp_mem_unmap}; frees allocated memory. Idempotent. */
  @Override
  public void close() {
    if (closed.compareAndSet(false, true)) {
      if (scope != null) {
        scope.close();
      }
      context.closed(this);
      UcxException.check(Native.memUnmap(context.handle(), handle), "ucp_mem_unmap");
    }
  }
}
