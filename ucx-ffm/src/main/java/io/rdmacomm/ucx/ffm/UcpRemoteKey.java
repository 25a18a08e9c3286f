package io.rdmacomm.ucx.ffm;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A peer's memory key unpacked for one endpoint ({@code ucp_rkey_h}), from
 * {@link UcpEndpoint#unpackRemoteKey}. Close it before the endpoint.
 *
 * <p>Thread safety: as its endpoint's worker.
 */
public final class UcpRemoteKey implements AutoCloseable {
  private final long handle;
  private final AtomicBoolean closed = new AtomicBoolean();

  UcpRemoteKey(long handle) {
    this.handle = handle;
  }

  /**
   * A local pointer to the peer's memory at {@code remoteAddress} ({@code ucp_rkey_ptr}), for plain loads
   * and stores without put/get. Only transports that map the peer's memory into this process (shared
   * memory) can give one: otherwise the result is empty. The segment is valid until this key is closed
   * and the peer keeps its mapping; it does not track either.
   *
   * @throws UcxException for failures other than "this transport cannot map it"
   */
  public Optional<MemorySegment> directPointer(long remoteAddress, long length) {
    checkOpen();
    try (Arena call = Arena.ofConfined()) {
      MemorySegment out = call.allocate(ValueLayout.JAVA_LONG);
      int s = Native.rkeyPtr(handle, remoteAddress, out.address());
      if (s == UcpConst.UCS_ERR_UNREACHABLE || s == UcpConst.UCS_ERR_UNSUPPORTED) {
        return Optional.empty();
      }
      UcxException.check(s, "ucp_rkey_ptr");
      return Optional.of(MemorySegment.ofAddress(out.get(ValueLayout.JAVA_LONG, 0)).reinterpret(length));
    }
  }

  long handle() {
    checkOpen();
    return handle;
  }

  private void checkOpen() {
    if (closed.get()) {
      throw new IllegalStateException("remote key destroyed");
    }
  }

  /** {@code ucp_rkey_destroy}. Idempotent. */
  @Override
  public void close() {
    if (closed.compareAndSet(false, true)) {
      Native.rkeyDestroy(handle);
    }
  }
}
