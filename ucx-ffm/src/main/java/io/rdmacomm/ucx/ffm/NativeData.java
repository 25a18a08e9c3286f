package io.rdmacomm.ucx.ffm;

import static io.rdmacomm.ucx.ffm.Native.I;
import static io.rdmacomm.ucx.ffm.Native.L;
import static io.rdmacomm.ucx.ffm.Native.S;
import static io.rdmacomm.ucx.ffm.Native.none;
import static io.rdmacomm.ucx.ffm.Native.ptr;
import static io.rdmacomm.ucx.ffm.Native.status;
import static io.rdmacomm.ucx.ffm.Native.ucp;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.invoke.MethodHandle;

/**
 * Downcall handles for the data path: sends, receives, RMA and request polling. Pointers are {@code long}s
 * and statuses bytes, as in {@link Native}.
 *
 * <p>Each call has a second, {@code critical} handle ({@link Linker.Option#critical}), which skips the
 * thread-state transition; it is only safe because none of these functions blocks or runs a callback
 * (the binding never passes a completion callback). A worker in {@code UCS_THREAD_MODE_MULTI} never uses
 * them: there a send may spin on the worker lock held by another thread that is inside an upcall, and a
 * critical call would keep the waiting thread from reaching a safepoint while that upcall waits for a GC.
 * {@code ucp_worker_progress} is never critical: it runs the upcalls.
 */
final class NativeData {
  private NativeData() {}

  private static final Linker.Option CRITICAL = Linker.Option.critical(false);

  private static final FunctionDescriptor AM_SEND_FD = ptr(L, I, L, L, L, L, L);
  private static final MethodHandle AM_SEND_NBX = ucp("ucp_am_send_nbx", AM_SEND_FD);
  private static final FunctionDescriptor AM_RECV_DATA_FD = ptr(L, L, L, L, L);
  private static final MethodHandle AM_RECV_DATA_NBX = ucp("ucp_am_recv_data_nbx", AM_RECV_DATA_FD);
  private static final MethodHandle AM_DATA_RELEASE = ucp("ucp_am_data_release", none(L, L));
  private static final FunctionDescriptor TAG_SEND_FD = ptr(L, L, L, L, L);
  private static final MethodHandle TAG_SEND_NBX = ucp("ucp_tag_send_nbx", TAG_SEND_FD);
  private static final FunctionDescriptor TAG_RECV_FD = ptr(L, L, L, L, L, L);
  private static final MethodHandle TAG_RECV_NBX = ucp("ucp_tag_recv_nbx", TAG_RECV_FD);
  private static final FunctionDescriptor RMA_FD = ptr(L, L, L, L, L, L);
  private static final MethodHandle PUT_NBX = ucp("ucp_put_nbx", RMA_FD);
  private static final MethodHandle GET_NBX = ucp("ucp_get_nbx", RMA_FD);
  private static final MethodHandle REQUEST_CHECK_STATUS = ucp("ucp_request_check_status", status(L));
  private static final MethodHandle TAG_RECV_REQUEST_TEST = ucp("ucp_tag_recv_request_test", status(L, L));
  private static final MethodHandle REQUEST_FREE = ucp("ucp_request_free", none(L));

  /**
   * The {@code critical} handles, made on first use: only a worker in {@code SINGLE} mode calls them, and the
   * rdma:// provider's workers are {@code MULTI}, so a process of it never pays for their stubs (a handle of a new
   * shape or option generates one as it is made).
   */
  private static final class Critical {
    private Critical() {}

    static final MethodHandle AM_SEND_NBX = ucp("ucp_am_send_nbx", AM_SEND_FD, CRITICAL);
    static final MethodHandle AM_RECV_DATA_NBX =
        ucp("ucp_am_recv_data_nbx", AM_RECV_DATA_FD, CRITICAL);
    static final MethodHandle AM_DATA_RELEASE = ucp("ucp_am_data_release", none(L, L), CRITICAL);
    static final MethodHandle TAG_SEND_NBX = ucp("ucp_tag_send_nbx", TAG_SEND_FD, CRITICAL);
    static final MethodHandle TAG_RECV_NBX = ucp("ucp_tag_recv_nbx", TAG_RECV_FD, CRITICAL);
    static final MethodHandle PUT_NBX = ucp("ucp_put_nbx", RMA_FD, CRITICAL);
    static final MethodHandle GET_NBX = ucp("ucp_get_nbx", RMA_FD, CRITICAL);
    static final MethodHandle REQUEST_CHECK_STATUS =
        ucp("ucp_request_check_status", status(L), CRITICAL);
    static final MethodHandle TAG_RECV_REQUEST_TEST =
        ucp("ucp_tag_recv_request_test", status(L, L), CRITICAL);
    static final MethodHandle REQUEST_FREE = ucp("ucp_request_free", none(L), CRITICAL);
  }

  static long amSendNbx(boolean critical, long ep, int id, long header, long headerLength, long buffer, long count,
      long param) {
    try {
      return critical
          ? (long) Critical.AM_SEND_NBX.invokeExact(ep, id, header, headerLength, buffer, count, param)
          : (long) AM_SEND_NBX.invokeExact(ep, id, header, headerLength, buffer, count, param);
    } catch (Throwable t) {
      throw Native.rethrow(t);
    }
  }

  static long amRecvDataNbx(boolean critical, long worker, long descriptor, long buffer, long count, long param) {
    try {
      return critical
          ? (long) Critical.AM_RECV_DATA_NBX.invokeExact(worker, descriptor, buffer, count, param)
          : (long) AM_RECV_DATA_NBX.invokeExact(worker, descriptor, buffer, count, param);
    } catch (Throwable t) {
      throw Native.rethrow(t);
    }
  }

  static void amDataRelease(boolean critical, long worker, long data) {
    try {
      if (critical) {
        Critical.AM_DATA_RELEASE.invokeExact(worker, data);
      } else {
        AM_DATA_RELEASE.invokeExact(worker, data);
      }
    } catch (Throwable t) {
      throw Native.rethrow(t);
    }
  }

  static long tagSendNbx(boolean critical, long ep, long buffer, long count, long tag, long param) {
    try {
      return critical
          ? (long) Critical.TAG_SEND_NBX.invokeExact(ep, buffer, count, tag, param)
          : (long) TAG_SEND_NBX.invokeExact(ep, buffer, count, tag, param);
    } catch (Throwable t) {
      throw Native.rethrow(t);
    }
  }

  static long tagRecvNbx(boolean critical, long worker, long buffer, long count, long tag, long mask, long param) {
    try {
      return critical
          ? (long) Critical.TAG_RECV_NBX.invokeExact(worker, buffer, count, tag, mask, param)
          : (long) TAG_RECV_NBX.invokeExact(worker, buffer, count, tag, mask, param);
    } catch (Throwable t) {
      throw Native.rethrow(t);
    }
  }

  static long putNbx(boolean critical, long ep, long buffer, long count, long remoteAddress, long rkey, long param) {
    try {
      return critical
          ? (long) Critical.PUT_NBX.invokeExact(ep, buffer, count, remoteAddress, rkey, param)
          : (long) PUT_NBX.invokeExact(ep, buffer, count, remoteAddress, rkey, param);
    } catch (Throwable t) {
      throw Native.rethrow(t);
    }
  }

  static long getNbx(boolean critical, long ep, long buffer, long count, long remoteAddress, long rkey, long param) {
    try {
      return critical
          ? (long) Critical.GET_NBX.invokeExact(ep, buffer, count, remoteAddress, rkey, param)
          : (long) GET_NBX.invokeExact(ep, buffer, count, remoteAddress, rkey, param);
    } catch (Throwable t) {
      throw Native.rethrow(t);
    }
  }

  static int requestCheckStatus(boolean critical, long request) {
    try {
      return critical
          ? (byte) Critical.REQUEST_CHECK_STATUS.invokeExact(request)
          : (byte) REQUEST_CHECK_STATUS.invokeExact(request);
    } catch (Throwable t) {
      throw Native.rethrow(t);
    }
  }

  static int tagRecvRequestTest(boolean critical, long request, long info) {
    try {
      return critical
          ? (byte) Critical.TAG_RECV_REQUEST_TEST.invokeExact(request, info)
          : (byte) TAG_RECV_REQUEST_TEST.invokeExact(request, info);
    } catch (Throwable t) {
      throw Native.rethrow(t);
    }
  }

  static void requestFree(boolean critical, long request) {
    try {
      if (critical) {
        Critical.REQUEST_FREE.invokeExact(request);
      } else {
        REQUEST_FREE.invokeExact(request);
      }
    } catch (Throwable t) {
      throw Native.rethrow(t);
    }
  }
}
