package io.rdmacomm.ucx.ffm;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.ByteOrder;

/** {@code struct sockaddr_in}/{@code sockaddr_in6} to and from Java (Linux layout). */
final class SocketAddresses {
  private static final short AF_INET = 2;
  private static final short AF_INET6 = 10;
  private static final ValueLayout.OfShort PORT = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);

  private SocketAddresses() {}

  static MemorySegment toNative(InetSocketAddress address, Arena arena) {
    if (address.isUnresolved()) {
      throw new IllegalArgumentException("unresolved address " + address);
    }
    byte[] ip = address.getAddress().getAddress();
    boolean v4 = address.getAddress() instanceof Inet4Address;
    MemorySegment sa = arena.allocate(v4 ? 16 : 28, 8);
    sa.set(ValueLayout.JAVA_SHORT, 0, v4 ? AF_INET : AF_INET6);
    sa.set(PORT, 2, (short) address.getPort());
    if (v4) {
      MemorySegment.copy(ip, 0, sa, ValueLayout.JAVA_BYTE, 4, 4);
    } else {
      MemorySegment.copy(ip, 0, sa, ValueLayout.JAVA_BYTE, 8, 16);
      sa.set(ValueLayout.JAVA_INT, 24, ((Inet6Address) address.getAddress()).getScopeId());
    }
    return sa;
  }

  /** Reads a {@code sockaddr_storage} holding an IPv4 or IPv6 address. */
  static InetSocketAddress fromNative(MemorySegment storage) {
    short family = storage.get(ValueLayout.JAVA_SHORT, 0);
    int port = Short.toUnsignedInt(storage.get(PORT, 2));
    try {
      if (family == AF_INET) {
        return new InetSocketAddress(InetAddress.getByAddress(storage.asSlice(4, 4).toArray(ValueLayout.JAVA_BYTE)),
            port);
      }
      if (family == AF_INET6) {
        byte[] ip = storage.asSlice(8, 16).toArray(ValueLayout.JAVA_BYTE);
        return new InetSocketAddress(Inet6Address.getByAddress(null, ip, storage.get(ValueLayout.JAVA_INT, 24)), port);
      }
    } catch (UnknownHostException e) {
      throw new IllegalStateException("malformed address from UCX", e);
    }
    throw new IllegalStateException("unexpected address family " + family);
  }
}
