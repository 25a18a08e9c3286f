package io.rdmacomm.ucx.ffm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 60, unit = TimeUnit.SECONDS)
class AmTest {
  @Test
  void pingPongKeepsData() {
    try (Pair p = new Pair(UcpEndpoint.ErrorMode.PEER); Arena arena = Arena.ofConfined()) {
      MemorySegment got = arena.allocate(64);
      long[] count = {0, 0};
      p.b.setAmHandler(1, m -> {
        // echo header and data back on the reply endpoint
        UcpRequest r = replyRequest[0];
        m.reply(2, m.header(), m.data(), 0, r);
        count[0]++;
      });
      replyRequest[0] = p.b.newRequest();
      p.a.setAmHandler(2, m -> {
        assertEquals(8, m.headerLength());
        m.copyDataTo(got, 0);
        got.set(ValueLayout.JAVA_LONG, 56, m.dataLength());
        got.set(ValueLayout.JAVA_LONG, 48, m.header().get(ValueLayout.JAVA_LONG_UNALIGNED, 0));
        count[1]++;
      });
      MemorySegment header = arena.allocate(8);
      MemorySegment data = arena.allocate(40);
      UcpRequest send = p.a.newRequest();
      for (int i = 0; i < 1000; i++) {
        header.set(ValueLayout.JAVA_LONG, 0, i);
        for (int j = 0; j < 40; j++) {
          data.set(ValueLayout.JAVA_BYTE, j, (byte) (i + j));
        }
        p.aToB.amSend(1, header, data, UcpEndpoint.AM_REPLY, send);
        p.await(send);
        long want = i + 1;
        p.progressUntil(() -> count[1] == want, 10);
        assertEquals(i, got.get(ValueLayout.JAVA_LONG, 48));
        assertEquals(40, got.get(ValueLayout.JAVA_LONG, 56));
        for (int j = 0; j < 40; j++) {
          assertEquals((byte) (i + j), got.get(ValueLayout.JAVA_BYTE, j));
        }
      }
      p.progressUntil(() -> replyRequest[0].isDone(), 10);
      assertEquals(1000, count[0]);
      assertEquals(0, p.a.outstandingRequests());
      assertEquals(0, p.b.outstandingRequests());
    }
  }

  private final UcpRequest[] replyRequest = new UcpRequest[1];

  @Test
  void largeMessageGoesByRendezvousIntact() {
    int size = 4 << 20;
    try (Pair p = new Pair(UcpEndpoint.ErrorMode.PEER); Arena arena = Arena.ofConfined()) {
      MemorySegment source = arena.allocate(size);
      for (int i = 0; i < size / 8; i++) {
        source.setAtIndex(ValueLayout.JAVA_LONG, i, i * 0x9E3779B97F4A7C15L);
      }
      MemorySegment target = arena.allocate(size);
      UcpRequest recv = p.b.newRequest();
      boolean[] rendezvous = {false};
      boolean[] arrived = {false};
      p.b.setAmHandler(7, m -> {
        rendezvous[0] = m.isRendezvous();
        assertEquals(size, m.dataLength());
        m.receiveData(target, recv);
        arrived[0] = true;
      });
      UcpRequest send = p.a.newRequest();
      p.aToB.amSend(7, MemorySegment.NULL, source, 0, send);
      p.progressUntil(() -> arrived[0] && recv.isDone() && send.isDone(), 20);
      recv.check();
      send.check();
      assertTrue(rendezvous[0], "4 MiB should arrive by rendezvous");
      assertEquals(size, recv.receivedLength());
      assertEquals(-1, source.mismatch(target));
      assertEquals(0, p.a.outstandingRequests() + p.b.outstandingRequests());
    }
  }

  @Test
  void handlerExceptionIsContained() {
    try (Pair p = new Pair(UcpEndpoint.ErrorMode.PEER); Arena arena = Arena.ofConfined()) {
      int[] calls = {0};
      p.b.setAmHandler(3, m -> {
        calls[0]++;
        throw new IllegalStateException("handler failure on purpose");
      });
      UcpRequest send = p.a.newRequest();
      MemorySegment data = arena.allocate(16);
      for (int i = 0; i < 3; i++) {
        p.aToB.amSend(3, MemorySegment.NULL, data, 0, send);
        p.await(send);
        int want = i + 1;
        p.progressUntil(() -> calls[0] == want, 10);
      }
      assertEquals(3, calls[0]);
    }
  }
  @Test
  void keptRendezvousIsReceivedAfterTheHandler() {
    int size = 4 << 20;
    try (Pair p = new Pair(UcpEndpoint.ErrorMode.NONE); Arena arena = Arena.ofConfined()) {
      MemorySegment source = arena.allocate(size);
      for (int i = 0; i < size / 8; i++) {
        source.setAtIndex(ValueLayout.JAVA_LONG, i, i * 3L + 1);
      }
      long[] descriptor = {0};
      p.b.setAmHandler(8, m -> {
        m.keep();
        descriptor[0] = m.dataAddress();
      });
      UcpRequest send = p.a.newRequest();
      p.aToB.amSend(8, MemorySegment.NULL, source, 0, send);
      p.progressUntil(() -> descriptor[0] != 0, 10);
      MemorySegment target = arena.allocate(size);
      UcpRequest recv = p.b.newRequest();
      p.b.receiveAmData(descriptor[0], target, recv);
      p.progressUntil(() -> recv.isDone() && send.isDone(), 20);
      recv.check();
      send.check();
      assertEquals(-1, source.mismatch(target));
      assertEquals(0, p.a.outstandingRequests() + p.b.outstandingRequests());
    }
  }

  /**
   * On shared memory UCX 1.13 delivers an 8-byte message inline (eager short: transient) and a 4000-byte
   * one in its own receive descriptor (eager bcopy: persistent), which the application may keep.
   */
  @Test
  void onlyPersistentDataCanBeKept() {
    try (Pair p = new Pair(UcpEndpoint.ErrorMode.NONE); Arena arena = Arena.ofConfined()) {
      boolean[] refused = {false};
      long[] kept = {0, 0};
      p.b.setAmHandler(9, m -> {
        if (m.dataLength() == 8) {
          try {
            m.keep();
          } catch (IllegalStateException e) {
            refused[0] = !m.isDataPersistent();
          }
        } else {
          m.keep();
          kept[0] = m.dataAddress();
          kept[1] = m.dataLength();
        }
      });
      UcpRequest send = p.a.newRequest();
      p.aToB.amSend(9, MemorySegment.NULL, arena.allocate(8), 0, send);
      p.progressUntil(() -> refused[0] && send.isDone(), 10);
      MemorySegment medium = arena.allocate(4000);
      for (int i = 0; i < 500; i++) {
        medium.setAtIndex(ValueLayout.JAVA_LONG, i, i * 11L);
      }
      p.aToB.amSend(9, MemorySegment.NULL, medium, 0, send);
      p.progressUntil(() -> kept[0] != 0 && send.isDone(), 10);
      // more traffic through the same receive path must not overwrite the kept descriptor
      p.aToB.amSend(9, MemorySegment.NULL, arena.allocate(8), 0, send);
      p.await(send);
      assertEquals(4000, kept[1]);
      assertEquals(-1, medium.mismatch(Memory.ALL.asSlice(kept[0], 4000)));
      p.b.releaseAmData(kept[0]);
    }
  }
}
