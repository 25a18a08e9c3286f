package io.rdmacomm.ucx.ffm;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/** Raw-address helpers shared by the wrappers. */
final class Memory {
  private Memory() {}

  /**
   * A segment spanning the whole address space. Reading through it at an absolute address needs no
   * per-call segment object, which is what keeps upcalls and out-parameters allocation-free; the price
   * is that nothing checks bounds, so it only ever reads addresses libucp just handed over.
   */
  static final MemorySegment ALL = MemorySegment.NULL.reinterpret(Long.MAX_VALUE);

  /** The address of a native segment; heap segments cannot be handed to libucp, which keeps the pointer. */
  static long address(MemorySegment segment) {
    if (!segment.isNative()) {
      throw new IllegalArgumentException("libucp needs native memory; got a heap segment");
    }
    return segment.address();
  }

  static long readLong(long address) {
    return ALL.get(ValueLayout.JAVA_LONG_UNALIGNED, address);
  }

  static int readInt(long address) {
    return ALL.get(ValueLayout.JAVA_INT_UNALIGNED, address);
  }

  static void writeLong(long address, long value) {
    ALL.set(ValueLayout.JAVA_LONG_UNALIGNED, address, value);
  }

  static void writeInt(long address, int value) {
    ALL.set(ValueLayout.JAVA_INT_UNALIGNED, address, value);
  }

  /** Copies {@code length} bytes at a raw address into a new array (control path only). */
  static byte[] toBytes(long address, long length) {
    return ALL.asSlice(address, length).toArray(ValueLayout.JAVA_BYTE);
  }

  /** A view of native memory owned by libucp, usable until {@code scope} closes. */
  static MemorySegment view(long address, long length, Arena scope) {
    return MemorySegment.ofAddress(address).reinterpret(length, scope, null);
  }
}
