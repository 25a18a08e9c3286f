package io.rdmacomm.ucx.ffm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Runs in the surefire execution with UCX_TLS=tcp: the same operations over the tcp transport. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class TransportTcpTest {
  @Test
  void endpointsUseTcp() {
    try (Pair p = new Pair(UcpEndpoint.ErrorMode.NONE)) {
      String lanes = p.aToB.describe();
      assertTrue(lanes.contains("tcp/"), lanes);
      assertFalse(lanes.contains("posix/") || lanes.contains("sysv/") || lanes.contains("cma/"), lanes);
    }
  }

  @Test
  void activeMessagesSmallAndRendezvous() {
    int large = 4 << 20;
    try (Pair p = new Pair(UcpEndpoint.ErrorMode.PEER); Arena arena = Arena.ofConfined()) {
      MemorySegment source = arena.allocate(large);
      for (int i = 0; i < large / 8; i++) {
        source.setAtIndex(ValueLayout.JAVA_LONG, i, i ^ 0x5555_5555L);
      }
      MemorySegment target = arena.allocate(large);
      UcpRequest recv = p.b.newRequest();
      long[] small = {0};
      boolean[] rendezvous = {false};
      p.b.setAmHandler(1, m -> small[0] += Memory.readLong(m.dataAddress()));
      p.b.setAmHandler(2, m -> {
        rendezvous[0] = m.isRendezvous();
        m.receiveData(target, recv);
      });
      UcpRequest send = p.a.newRequest();
      for (int i = 1; i <= 100; i++) {
        p.aToB.amSend(1, MemorySegment.NULL, source.asSlice(i * 8L, 8), 0, send);
        p.await(send);
      }
      long want = 0;
      for (int i = 1; i <= 100; i++) {
        want += i ^ 0x5555_5555L;
      }
      long expected = want;
      p.progressUntil(() -> small[0] == expected, 10);
      p.aToB.amSend(2, MemorySegment.NULL, source, 0, send);
      p.progressUntil(() -> send.isDone() && rendezvous[0] && recv.isDone(), 30);
      recv.check();
      assertEquals(-1, source.mismatch(target));
      assertEquals(0, p.a.outstandingRequests() + p.b.outstandingRequests());
    }
  }

  @Test
  void putGetWorkButNoDirectPointer() {
    try (Pair p = new Pair(UcpEndpoint.ErrorMode.NONE); UcpMemory target = p.context.allocate(1 << 16);
        UcpRemoteKey key = p.aToB.unpackRemoteKey(target.packRemoteKey()); Arena arena = Arena.ofConfined()) {
      assertTrue(key.directPointer(target.address(), 8).isEmpty(), "tcp cannot map a peer's memory");
      MemorySegment source = arena.allocate(1 << 16);
      source.fill((byte) 0x3C);
      UcpRequest request = p.a.newRequest();
      p.aToB.put(source, target.address(), key, request);
      p.await(request);
      p.aToB.flush(request);
      p.await(request);
      assertEquals(-1, source.mismatch(target.segment()));
      MemorySegment back = arena.allocate(1 << 16);
      p.aToB.get(back, target.address(), key, request);
      p.await(request);
      assertEquals(-1, source.mismatch(back));
    }
  }
}
