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

@Timeout(value = 60, unit = TimeUnit.SECONDS)
class TagTest {
  @Test
  void sendAndReceiveMatchByTag() {
    try (Pair p = new Pair(UcpEndpoint.ErrorMode.NONE); Arena arena = Arena.ofConfined()) {
      MemorySegment out = arena.allocate(100);
      MemorySegment in = arena.allocate(128);
      UcpRequest send = p.a.newRequest();
      UcpRequest recv = p.b.newRequest();
      for (int round = 0; round < 100; round++) {
        out.fill((byte) round);
        // alternate posting the receive before and after the message arrives (expected vs unexpected path)
        if (round % 2 == 0) {
          p.b.tagRecv(in, 0x42_0000L | round, -1L, recv);
          p.aToB.tagSend(0x42_0000L | round, out, send);
        } else {
          p.aToB.tagSend(0x42_0000L | round, out, send);
          p.await(send);
          p.b.tagRecv(in, 0x42_0000L | round, -1L, recv);
        }
        p.await(recv);
        p.await(send);
        assertEquals(100, recv.receivedLength());
        assertEquals(0x42_0000L | round, recv.senderTag());
        assertEquals(-1, out.mismatch(in.asSlice(0, 100)));
      }
      assertEquals(0, p.a.outstandingRequests() + p.b.outstandingRequests());
    }
  }

  @Test
  void cancelledReceiveReportsCanceled() {
    try (Pair p = new Pair(UcpEndpoint.ErrorMode.NONE); Arena arena = Arena.ofConfined()) {
      UcpRequest recv = p.b.newRequest();
      p.b.tagRecv(arena.allocate(8), 7, -1L, recv);
      assertTrue(recv.isPending());
      assertFalse(recv.isDone());
      recv.cancel();
      p.progressUntil(recv::isDone, 10);
      assertEquals(UcxException.CANCELED, recv.status());
      UcxException e = org.junit.jupiter.api.Assertions.assertThrows(UcxException.class, recv::check);
      assertEquals(UcxException.CANCELED, e.status());
      assertEquals(0, p.b.outstandingRequests());
    }
  }

  @Test
  void requestCannotBeReusedWhilePending() {
    try (Pair p = new Pair(UcpEndpoint.ErrorMode.NONE); Arena arena = Arena.ofConfined()) {
      UcpRequest recv = p.b.newRequest();
      MemorySegment in = arena.allocate(8);
      p.b.tagRecv(in, 9, -1L, recv);
      org.junit.jupiter.api.Assertions.assertThrows(IllegalStateException.class, () -> p.b.tagRecv(in, 9, -1L, recv));
      MemorySegment out = arena.allocate(8);
      out.set(ValueLayout.JAVA_LONG, 0, 77);
      UcpRequest send = p.a.newRequest();
      p.aToB.tagSend(9, out, send);
      p.await(recv);
      assertEquals(77, in.get(ValueLayout.JAVA_LONG, 0));
    }
  }

  @Test
  void pendingRequestsAreFreedWhenTheWorkerCloses() {
    Pair p = new Pair(UcpEndpoint.ErrorMode.NONE);
    try (Arena arena = Arena.ofConfined()) {
      UcpRequest recv = p.b.newRequest();
      p.b.tagRecv(arena.allocate(8), 11, -1L, recv);
      assertEquals(1, p.b.outstandingRequests());
      p.close();
      assertEquals(0, p.b.outstandingRequests());
      assertEquals(UcxException.CANCELED, recv.status());
    }
  }
  @Test
  void closedEndpointAndKeyRefuseInsteadOfCrashing() {
    try (Arena arena = Arena.ofConfined(); UcpContext context = UcpContext.create();
        UcpWorker w1 = context.newWorker(UcpWorker.ThreadMode.SINGLE);
        UcpWorker w2 = context.newWorker(UcpWorker.ThreadMode.SINGLE); UcpMemory memory = context.allocate(64)) {
      UcpEndpoint ep = w1.connect(w2.address(), UcpEndpoint.ErrorMode.NONE, null);
      UcpRemoteKey key = ep.unpackRemoteKey(memory.packRemoteKey());
      key.close();
      UcpRequest request = w1.newRequest();
      MemorySegment data = arena.allocate(8);
      org.junit.jupiter.api.Assertions.assertThrows(IllegalStateException.class,
          () -> ep.put(data, memory.address(), key, request));
      ep.close(UcpEndpoint.CloseMode.FORCE, 5, TimeUnit.SECONDS);
      org.junit.jupiter.api.Assertions.assertThrows(IllegalStateException.class,
          () -> ep.tagSend(1, data, request));
      org.junit.jupiter.api.Assertions.assertThrows(IllegalStateException.class,
          () -> ep.amSend(1, MemorySegment.NULL, data, 0, request));
      assertFalse(request.isPending());
    }
  }
}
