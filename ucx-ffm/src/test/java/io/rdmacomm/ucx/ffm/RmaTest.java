package io.rdmacomm.ucx.ffm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RmaTest {
  private static final int SIZE = 1 << 20;

  @Test
  void putGetFlushIntoAllocatedMemory() {
    try (Pair p = new Pair(UcpEndpoint.ErrorMode.NONE); UcpMemory target = p.context.allocate(SIZE)) {
      assertEquals(SIZE, target.size());
      roundTrip(p, target);
    }
  }

  @Test
  void putGetFlushIntoRegisteredMemory() {
    try (Pair p = new Pair(UcpEndpoint.ErrorMode.NONE); Arena arena = Arena.ofConfined()) {
      MemorySegment mine = arena.allocate(SIZE, 4096);
      try (UcpMemory target = p.context.register(mine)) {
        assertEquals(mine.address(), target.address());
        roundTrip(p, target);
      }
    }
  }

  /** a puts a pattern into b's memory, flushes, checks it landed, gets it back and compares. */
  private static void roundTrip(Pair p, UcpMemory target) {
    try (Arena arena = Arena.ofConfined(); UcpRemoteKey key = p.aToB.unpackRemoteKey(target.packRemoteKey())) {
      MemorySegment source = arena.allocate(SIZE);
      for (int i = 0; i < SIZE / 8; i++) {
        source.setAtIndex(ValueLayout.JAVA_LONG, i, ~i * 31L);
      }
      UcpRequest request = p.a.newRequest();
      p.aToB.put(source, target.address(), key, request);
      p.await(request);
      p.aToB.flush(request);
      p.await(request);
      assertEquals(-1, source.mismatch(target.segment()));

      target.segment().asSlice(4096, 8).set(ValueLayout.JAVA_LONG, 0, 0x1234_5678_9ABCL);
      MemorySegment back = arena.allocate(SIZE);
      p.aToB.get(back, target.address(), key, request);
      p.await(request);
      assertEquals(-1, target.segment().mismatch(back));
      assertEquals(0x1234_5678_9ABCL, back.get(ValueLayout.JAVA_LONG, 4096));
      assertEquals(0, p.a.outstandingRequests());
    }
  }

  @Test
  void allocatedMemoryIsInaccessibleAfterUnmap() {
    try (UcpContext context = UcpContext.create()) {
      UcpMemory memory = context.allocate(4096);
      MemorySegment segment = memory.segment();
      segment.set(ValueLayout.JAVA_INT, 0, 1);
      memory.close();
      assertThrows(IllegalStateException.class, () -> segment.get(ValueLayout.JAVA_INT, 0));
    }
  }

  @Test
  void directPointerOnSharedMemory() {
    try (Pair p = new Pair(UcpEndpoint.ErrorMode.NONE); UcpMemory target = p.context.allocate(SIZE);
        UcpRemoteKey key = p.aToB.unpackRemoteKey(target.packRemoteKey())) {
      Optional<MemorySegment> direct = key.directPointer(target.address() + 64, 64);
      assertTrue(direct.isPresent(), "shared-memory transports should map memory UCX allocated");
      direct.get().set(ValueLayout.JAVA_LONG, 0, 0xFEEDL);
      assertEquals(0xFEEDL, target.segment().get(ValueLayout.JAVA_LONG, 64));
    }
  }
}
