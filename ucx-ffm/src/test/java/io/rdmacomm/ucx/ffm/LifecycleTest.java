package io.rdmacomm.ucx.ffm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.util.EnumSet;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

@Timeout(value = 60, unit = TimeUnit.SECONDS)
class LifecycleTest {
  @Test
  void loadsASupportedLibucp() {
    assertEquals(java.util.Optional.empty(), Ucx.unavailabilityCause());
    UcxVersion v = Ucx.version();
    assertEquals(1, v.major());
    assertTrue(v.minor() >= 12, v.toString());
  }

  @Test
  void clearedUcxErrorSignalsBeforeLoading() throws Throwable {
    Ucx.version();
    Linker linker = Linker.nativeLinker();
    MethodHandle getenv = linker.downcallHandle(linker.defaultLookup().find("getenv").orElseThrow(),
        FunctionDescriptor.of(ValueLayout.ADDRESS, ValueLayout.ADDRESS));
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment value = (MemorySegment) getenv.invokeExact(arena.allocateFrom("UCX_ERROR_SIGNALS"));
      assertEquals("", value.reinterpret(16).getString(0));
    }
  }

  @ParameterizedTest
  @EnumSource(UcpWorker.ThreadMode.class)
  void contextAndWorkerLifecycle(UcpWorker.ThreadMode mode) {
    try (UcpContext context = UcpContext.create(EnumSet.allOf(UcpContext.Feature.class), Map.of(),
        mode == UcpWorker.ThreadMode.MULTI)) {
      UcpWorker worker = context.newWorker(mode);
      assertEquals(mode, worker.threadMode());
      byte[] address = worker.address();
      assertTrue(address.length > 0);
      assertTrue(worker.eventFd() >= 0);
      worker.progress();
      worker.close();
      worker.close();
      assertThrows(IllegalStateException.class, worker::address);
      assertThrows(IllegalStateException.class, worker::newRequest);
    }
  }

  @Test
  void configOverrideIsApplied() {
    assertThrows(UcxException.class,
        () -> UcpContext.create(EnumSet.of(UcpContext.Feature.AM), Map.of("RNDV_THRESH", "not-a-size"), false).close());
    try (UcpContext context = UcpContext.create(EnumSet.of(UcpContext.Feature.AM), Map.of("TLS", "tcp"), false);
        UcpWorker a = context.newWorker(UcpWorker.ThreadMode.SINGLE);
        UcpWorker b = context.newWorker(UcpWorker.ThreadMode.SINGLE)) {
      UcpEndpoint ep = a.connect(b.address(), UcpEndpoint.ErrorMode.NONE, null);
      String info = ep.describe();
      assertTrue(info.contains("tcp/"), info);
      assertFalse(info.contains("posix/") || info.contains("sysv/"), info);
    }
  }

  @Test
  void awaitEventsTimesOutAndWakesOnSignal() throws Exception {
    try (UcpContext context = UcpContext.create(); UcpWorker worker = context.newWorker(UcpWorker.ThreadMode.MULTI)) {
      while (!worker.arm()) {
        worker.progress();
      }
      long start = System.nanoTime();
      assertFalse(worker.awaitEvents(200, TimeUnit.MILLISECONDS));
      assertTrue(System.nanoTime() - start >= TimeUnit.MILLISECONDS.toNanos(150));
      CompletableFuture<Boolean> woken = CompletableFuture.supplyAsync(() -> worker.awaitEvents(30, TimeUnit.SECONDS));
      // the waiter may not have reached poll yet; signal until it returns, the fd latches the wakeup anyway
      while (!woken.isDone()) {
        worker.signal();
        Thread.onSpinWait();
      }
      assertTrue(woken.get());
    }
  }

  @Test
  void statusesBecomeExceptionsWithUcxText() {
    UcxException e = new UcxException("op", UcxException.TIMED_OUT);
    assertEquals(-20, e.status());
    assertEquals("Operation timed out", e.statusString());
    assertTrue(e.getMessage().contains("op: Operation timed out (-20)"), e.getMessage());
  }
  @Test
  void closingTheContextClosesWhatIsStillOpen() {
    UcpContext context = UcpContext.create();
    UcpWorker a = context.newWorker(UcpWorker.ThreadMode.SINGLE);
    UcpWorker b = context.newWorker(UcpWorker.ThreadMode.SINGLE);
    UcpEndpoint ep = a.connect(b.address(), UcpEndpoint.ErrorMode.NONE, null);
    UcpMemory memory = context.allocate(4096);
    MemorySegment segment = memory.segment();
    context.close();
    assertThrows(IllegalStateException.class, a::address);
    assertThrows(IllegalStateException.class, () -> ep.unpackRemoteKey(new byte[16]));
    assertThrows(IllegalStateException.class, () -> segment.get(ValueLayout.JAVA_INT, 0));
    assertThrows(IllegalStateException.class, () -> context.newWorker(UcpWorker.ThreadMode.SINGLE));
  }
}
