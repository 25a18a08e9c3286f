package io.rdmacomm.ucx.ffm;

/**
 * Receives active messages of one id; installed with {@link UcpWorker#setAmHandler}.
 *
 * <p>Runs inside {@link UcpWorker#progress()}, on the progressing thread, and must not progress the worker
 * itself (UCX forbids re-entering progress from a callback). Sending, including
 * {@link AmMessage#reply replying}, and posting receives are allowed. An exception it throws is logged
 * and otherwise ignored.
 */
@FunctionalInterface
public interface AmHandler {
  /**
   * One message. {@code message} is a reused view valid only until this method returns; keep the data
   * beyond that with {@link AmMessage#keep()} or receive it with {@link AmMessage#receiveData}.
   */
  void onMessage(AmMessage message);
}
