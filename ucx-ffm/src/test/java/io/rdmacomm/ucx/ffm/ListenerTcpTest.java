package io.rdmacomm.ucx.ffm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Connection-manager path: listener, connection request, accept and reject, over loopback tcp. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ListenerTcpTest {
  @Test
  void acceptedConnectionCarriesMessages() {
    try (UcpContext context = UcpContext.create();
        UcpWorker server = context.newWorker(UcpWorker.ThreadMode.SINGLE);
        UcpWorker client = context.newWorker(UcpWorker.ThreadMode.SINGLE);
        Arena arena = Arena.ofConfined()) {
      AtomicReference<UcpEndpoint> accepted = new AtomicReference<>();
      AtomicReference<InetSocketAddress> from = new AtomicReference<>();
      UcpListener listener = server.listen(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), request -> {
        from.set(request.clientAddress());
        accepted.set(request.accept(UcpEndpoint.ErrorMode.PEER, null));
      });
      InetSocketAddress bound = listener.address();
      assertNotEquals(0, bound.getPort());
      assertTrue(bound.getAddress().isLoopbackAddress(), bound.toString());

      long[] got = {0};
      server.setAmHandler(1, m -> got[0] = Memory.readLong(m.dataAddress()));
      UcpEndpoint ep = client.connect(bound, UcpEndpoint.ErrorMode.PEER, null);
      MemorySegment data = arena.allocate(8);
      data.set(ValueLayout.JAVA_LONG, 0, 99);
      UcpRequest send = client.newRequest();
      ep.amSend(1, MemorySegment.NULL, data, 0, send);
      progressUntil(server, client, () -> got[0] == 99 && send.isDone(), 20);
      send.check();
      assertNotNull(accepted.get());
      assertTrue(from.get().getAddress().isLoopbackAddress(), from.get().toString());

      // and back over the accepted endpoint
      long[] back = {0};
      client.setAmHandler(2, m -> back[0] = Memory.readLong(m.dataAddress()));
      UcpRequest reply = server.newRequest();
      accepted.get().amSend(2, MemorySegment.NULL, data, 0, reply);
      progressUntil(server, client, () -> back[0] == 99 && reply.isDone(), 20);
      listener.close();
    }
  }

  @Test
  void rejectedConnectionFailsTheClient() {
    try (UcpContext context = UcpContext.create();
        UcpWorker server = context.newWorker(UcpWorker.ThreadMode.SINGLE);
        UcpWorker client = context.newWorker(UcpWorker.ThreadMode.SINGLE);
        Arena arena = Arena.ofConfined()) {
      int[] requests = {0};
      UcpListener listener = server.listen(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), request -> {
        requests[0]++;
        request.reject();
      });
      AtomicReference<UcxException> failure = new AtomicReference<>();
      UcpEndpoint ep = client.connect(listener.address(), UcpEndpoint.ErrorMode.PEER, (e, cause) -> failure.set(cause));
      UcpRequest send = client.newRequest();
      ep.amSend(1, MemorySegment.NULL, arena.allocate(8), 0, send);
      progressUntil(server, client, () -> failure.get() != null && send.isDone(), 20);
      assertEquals(1, requests[0]);
      assertTrue(send.status() < 0, "send on a rejected connection must fail, got " + send.status());
      assertTrue(ep.isFailed());
      assertEquals(0, client.outstandingRequests());
    }
  }

  private static void progressUntil(UcpWorker a, UcpWorker b, java.util.function.BooleanSupplier done, int seconds) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
    while (!done.getAsBoolean()) {
      a.progress();
      b.progress();
      if (System.nanoTime() > deadline) {
        throw new AssertionError("not reached within " + seconds + " s");
      }
    }
  }
}
