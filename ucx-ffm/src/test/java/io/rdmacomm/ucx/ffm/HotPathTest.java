package io.rdmacomm.ucx.ffm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.management.ManagementFactory;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The data path allocates nothing on the Java heap and leaks no request. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class HotPathTest {
  private static final com.sun.management.ThreadMXBean THREADS =
      (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

  /** Ping-pong state touched by both handlers; fields, not captured locals, so nothing is boxed or captured. */
  private long pongs;
  private long checksum;
  private UcpRequest replyRequest;

  @Test
  void activeMessagePingPongAllocatesNothing() {
    try (Pair p = new Pair(UcpEndpoint.ErrorMode.NONE); Arena arena = Arena.ofConfined()) {
      MemorySegment reply = arena.allocate(8);
      replyRequest = p.b.newRequest();
      p.b.setAmHandler(1, m -> {
        // the reply request is reused for every reply: an 8-byte send on shm completes inside the call
        if (!replyRequest.isDone()) {
          throw new IllegalStateException("previous reply still in flight");
        }
        m.copyDataTo(reply, 0);
        m.reply(2, MemorySegment.NULL, reply, 0, replyRequest);
      });
      p.a.setAmHandler(2, m -> {
        checksum += Memory.readLong(m.dataAddress());
        pongs++;
      });
      MemorySegment ping = arena.allocate(8);
      UcpRequest send = p.a.newRequest();

      pingPong(p, ping, send, 100_000);
      long before = THREADS.getCurrentThreadAllocatedBytes();
      long expected = pingPong(p, ping, send, 100_000);
      long allocated = THREADS.getCurrentThreadAllocatedBytes() - before;

      assertEquals(expected, checksum, "replies carried the pings' values");
      assertTrue(allocated < 1024, "100k round trips allocated " + allocated + " bytes");
      p.progressUntil(replyRequest::isDone, 10);
      assertEquals(0, p.a.outstandingRequests() + p.b.outstandingRequests());
    }
  }

  /** Runs {@code rounds} round trips; returns the checksum the replies must add up to. */
  private long pingPong(Pair p, MemorySegment ping, UcpRequest send, int rounds) {
    checksum = 0;
    pongs = 0;
    long expected = 0;
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    for (int i = 0; i < rounds; i++) {
      ping.set(ValueLayout.JAVA_LONG, 0, i * 7L);
      expected += i * 7L;
      p.aToB.amSend(1, MemorySegment.NULL, ping, UcpEndpoint.AM_REPLY, send);
      while (!send.isDone() || pongs <= i) {
        p.a.progress();
        p.b.progress();
        if (System.nanoTime() > deadline) {
          throw new AssertionError("stuck at round " + i);
        }
      }
      send.check();
    }
    return expected;
  }

  @Test
  void everyRequestHandleIsFreed() {
    int size = 256 << 10;
    try (Pair p = new Pair(UcpEndpoint.ErrorMode.NONE); Arena arena = Arena.ofConfined()) {
      MemorySegment data = arena.allocate(size);
      MemorySegment sink = arena.allocate(size);
      UcpRequest[] receives = new UcpRequest[4];
      for (int i = 0; i < receives.length; i++) {
        receives[i] = p.b.newRequest();
      }
      int[] next = {0};
      int[] received = {0};
      p.b.setAmHandler(5, m -> {
        if (m.isRendezvous()) {
          m.receiveData(sink, receives[next[0]++ % receives.length]);
        }
        received[0]++;
      });
      UcpRequest[] sends = new UcpRequest[4];
      for (int i = 0; i < sends.length; i++) {
        sends[i] = p.a.newRequest();
      }
      for (int i = 0; i < 200; i++) {
        UcpRequest s = sends[i % sends.length];
        UcpRequest r = receives[i % receives.length];
        p.progressUntil(() -> s.isDone() && r.isDone(), 10);
        p.aToB.amSend(5, MemorySegment.NULL, data, 0, s);
      }
      p.progressUntil(() -> received[0] == 200, 10);
      for (int i = 0; i < 4; i++) {
        p.await(sends[i]);
        p.await(receives[i]);
      }
      assertTrue(p.a.requestsIssued() > 0, "256 KiB sends should have returned request handles");
      assertEquals(0, p.a.outstandingRequests());
      assertEquals(0, p.b.outstandingRequests());
    }
  }
}
