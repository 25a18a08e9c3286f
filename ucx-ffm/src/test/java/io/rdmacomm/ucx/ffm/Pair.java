package io.rdmacomm.ucx.ffm;

import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/** Two workers of one context, connected both ways by exchanging worker addresses, progressed by the test thread. */
final class Pair implements AutoCloseable {
  final UcpContext context;
  final UcpWorker a;
  final UcpWorker b;
  final UcpEndpoint aToB;
  final UcpEndpoint bToA;

  Pair(UcpEndpoint.ErrorMode mode) {
    context = UcpContext.create();
    a = context.newWorker(UcpWorker.ThreadMode.SINGLE);
    b = context.newWorker(UcpWorker.ThreadMode.SINGLE);
    aToB = a.connect(b.address(), mode, null);
    bToA = b.connect(a.address(), mode, null);
  }

  /** Progresses both workers until {@code done} holds; fails the test after {@code seconds}. */
  void progressUntil(BooleanSupplier done, long seconds) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
    while (!done.getAsBoolean()) {
      a.progress();
      b.progress();
      if (System.nanoTime() - deadline > 0) {
        throw new AssertionError("condition not reached within " + seconds + " s");
      }
    }
  }

  void await(UcpRequest request) {
    progressUntil(request::isDone, 10);
    request.check();
  }

  @Override
  public void close() {
    UcpRequest ca = a.newRequest();
    UcpRequest cb = b.newRequest();
    aToB.close(UcpEndpoint.CloseMode.FLUSH, ca);
    bToA.close(UcpEndpoint.CloseMode.FLUSH, cb);
    progressUntil(() -> ca.isDone() && cb.isDone(), 10);
    a.close();
    b.close();
    context.close();
  }
}
