package io.rdmacomm.ucx.ffm;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** A MULTI worker: two threads send on one endpoint while a third progresses it (non-critical handles). */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class MultiThreadTest {
  private static final int PER_THREAD = 5_000;

  @Test
  void concurrentSendersOnOneEndpoint() throws Exception {
    try (UcpContext context = UcpContext.create(EnumSet.allOf(UcpContext.Feature.class), Map.of(), true);
        UcpWorker sender = context.newWorker(UcpWorker.ThreadMode.MULTI);
        UcpWorker receiver = context.newWorker(UcpWorker.ThreadMode.SINGLE)) {
      long[] sums = new long[2];
      int[] count = {0};
      receiver.setAmHandler(1, m -> {
        int thread = (int) Memory.readLong(m.headerAddress());
        sums[thread] += Memory.readLong(m.dataAddress());
        count[0]++;
      });
      UcpEndpoint ep = sender.connect(receiver.address(), UcpEndpoint.ErrorMode.NONE, null);
      AtomicBoolean stop = new AtomicBoolean();
      ExecutorService pool = Executors.newFixedThreadPool(3);
      try {
        Future<?> progress = pool.submit(() -> {
          while (!stop.get()) {
            sender.progress();
          }
        });
        List<Future<?>> senders = new ArrayList<>();
        for (int t = 0; t < 2; t++) {
          int thread = t;
          senders.add(pool.submit(() -> send(sender, ep, thread)));
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (count[0] < 2 * PER_THREAD && System.nanoTime() < deadline) {
          receiver.progress();
        }
        for (Future<?> f : senders) {
          f.get(10, TimeUnit.SECONDS);
        }
        stop.set(true);
        progress.get(10, TimeUnit.SECONDS);
      } finally {
        stop.set(true);
        pool.shutdownNow();
      }
      long expected = (long) PER_THREAD * (PER_THREAD - 1) / 2;
      assertEquals(2 * PER_THREAD, count[0]);
      assertEquals(expected, sums[0]);
      assertEquals(expected, sums[1]);
      assertEquals(0, sender.outstandingRequests());
    }
  }

  /** Sends 0..PER_THREAD-1 with the thread number as header, waiting on its own request each time. */
  private static Void send(UcpWorker worker, UcpEndpoint ep, int thread) {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment header = arena.allocate(8);
      MemorySegment data = arena.allocate(8);
      header.set(ValueLayout.JAVA_LONG, 0, thread);
      UcpRequest request = worker.newRequest();
      for (int i = 0; i < PER_THREAD; i++) {
        data.set(ValueLayout.JAVA_LONG, 0, i);
        ep.amSend(1, header, data, 0, request);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!request.isDone()) {
          if (System.nanoTime() > deadline) {
            throw new AssertionError("send " + i + " of thread " + thread + " never completed");
          }
          Thread.onSpinWait(); // the progress thread completes it
        }
        request.check();
      }
    }
    return null;
  }
}
