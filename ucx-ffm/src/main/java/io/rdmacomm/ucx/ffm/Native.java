package io.rdmacomm.ucx.ffm;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;

/**
 * Downcall handles for libucp's control path (creation, teardown, queries) and the few libc functions the
 * binding needs, with one static method per C function so callers never see {@code Throwable}.
 *
 * <p>Every pointer travels as a Java {@code long} ({@link java.lang.foreign.ValueLayout#JAVA_LONG}), which
 * is how x86-64 and AArch64 pass pointers anyway ({@link Loader} refuses other platforms). That keeps
 * the hot path free of {@link MemorySegment} allocations: a segment argument is only wrapped in Java and
 * never crosses the boundary.
 *
 * <p>{@code ucs_status_t} is a packed enum, one signed byte (see {@code UCS_S_PACKED} in
 * {@code ucs/type/status.h}): every status comes back as {@code JAVA_BYTE}.
 *
 * <p>The data-path calls are in {@link NativeData}.
 */
final class Native {
  private Native() {}

  private static final Linker LINKER = Linker.nativeLinker();
  private static final SymbolLookup UCP = Loader.lookup();
  private static final SymbolLookup LIBC = LINKER.defaultLookup();

  static final MemoryLayout L = JAVA_LONG;
  static final MemoryLayout I = JAVA_INT;
  static final MemoryLayout S = JAVA_BYTE;

  static MethodHandle ucp(String name, FunctionDescriptor fd, Linker.Option... options) {
    return LINKER.downcallHandle(Loader.symbol(UCP, name), fd, options);
  }

  private static MethodHandle libc(String name, FunctionDescriptor fd) {
    return LINKER.downcallHandle(Loader.symbol(LIBC, name), fd);
  }

  static FunctionDescriptor status(MemoryLayout... args) {
    return FunctionDescriptor.of(S, args);
  }

  static FunctionDescriptor ptr(MemoryLayout... args) {
    return FunctionDescriptor.of(L, args);
  }

  static FunctionDescriptor none(MemoryLayout... args) {
    return FunctionDescriptor.ofVoid(args);
  }

  // ---- lifecycle and control: may block or run callbacks, never critical
  private static final MethodHandle CONFIG_READ = ucp("ucp_config_read", status(L, L, L));
  private static final MethodHandle CONFIG_MODIFY = ucp("ucp_config_modify", status(L, L, L));
  private static final MethodHandle CONFIG_RELEASE = ucp("ucp_config_release", none(L));
  private static final MethodHandle INIT_VERSION = ucp("ucp_init_version", status(I, I, L, L, L));
  private static final MethodHandle CLEANUP = ucp("ucp_cleanup", none(L));
  private static final MethodHandle WORKER_CREATE = ucp("ucp_worker_create", status(L, L, L));
  private static final MethodHandle WORKER_DESTROY = ucp("ucp_worker_destroy", none(L));
  private static final MethodHandle WORKER_PROGRESS = ucp("ucp_worker_progress", FunctionDescriptor.of(I, L));
  private static final MethodHandle WORKER_GET_EFD = ucp("ucp_worker_get_efd", status(L, L));
  private static final MethodHandle WORKER_ARM = ucp("ucp_worker_arm", status(L));
  private static final MethodHandle WORKER_WAIT = ucp("ucp_worker_wait", status(L));
  private static final MethodHandle WORKER_SIGNAL = ucp("ucp_worker_signal", status(L));
  private static final MethodHandle WORKER_GET_ADDRESS = ucp("ucp_worker_get_address", status(L, L, L));
  private static final MethodHandle WORKER_RELEASE_ADDRESS = ucp("ucp_worker_release_address", none(L, L));
  private static final MethodHandle WORKER_FLUSH_NBX = ucp("ucp_worker_flush_nbx", ptr(L, L));
  private static final MethodHandle SET_AM_RECV_HANDLER = ucp("ucp_worker_set_am_recv_handler", status(L, L));
  private static final MethodHandle EP_CREATE = ucp("ucp_ep_create", status(L, L, L));
  private static final MethodHandle EP_CLOSE_NBX = ucp("ucp_ep_close_nbx", ptr(L, L));
  private static final MethodHandle EP_FLUSH_NBX = ucp("ucp_ep_flush_nbx", ptr(L, L));
  private static final MethodHandle EP_PRINT_INFO = ucp("ucp_ep_print_info", none(L, L));
  private static final MethodHandle LISTENER_CREATE = ucp("ucp_listener_create", status(L, L, L));
  private static final MethodHandle LISTENER_DESTROY = ucp("ucp_listener_destroy", none(L));
  private static final MethodHandle LISTENER_QUERY = ucp("ucp_listener_query", status(L, L));
  private static final MethodHandle LISTENER_REJECT = ucp("ucp_listener_reject", status(L, L));
  private static final MethodHandle CONN_REQUEST_QUERY = ucp("ucp_conn_request_query", status(L, L));
  private static final MethodHandle MEM_MAP = ucp("ucp_mem_map", status(L, L, L));
  private static final MethodHandle MEM_UNMAP = ucp("ucp_mem_unmap", status(L, L));
  private static final MethodHandle MEM_QUERY = ucp("ucp_mem_query", status(L, L));
  private static final MethodHandle RKEY_PACK = ucp("ucp_rkey_pack", status(L, L, L, L));
  private static final MethodHandle RKEY_BUFFER_RELEASE = ucp("ucp_rkey_buffer_release", none(L));
  private static final MethodHandle EP_RKEY_UNPACK = ucp("ucp_ep_rkey_unpack", status(L, L, L));
  private static final MethodHandle RKEY_PTR = ucp("ucp_rkey_ptr", status(L, L, L));
  private static final MethodHandle RKEY_DESTROY = ucp("ucp_rkey_destroy", none(L));
  private static final MethodHandle REQUEST_CANCEL = ucp("ucp_request_cancel", none(L, L));
  private static final MethodHandle STATUS_STRING = ucp("ucs_status_string", ptr(S));

  // ---- libc
  private static final MethodHandle OPEN_MEMSTREAM = libc("open_memstream", ptr(L, L));
  private static final MethodHandle FCLOSE = libc("fclose", FunctionDescriptor.of(I, L));
  private static final MethodHandle FREE = libc("free", none(L));
  private static final MethodHandle POLL = libc("poll", FunctionDescriptor.of(I, L, L, I));

  static RuntimeException rethrow(Throwable t) {
    if (t instanceof RuntimeException r) {
      throw r;
    }
    if (t instanceof Error e) {
      throw e;
    }
    throw new IllegalStateException("unexpected checked exception from a downcall", t);
  }

  static int configRead(long configOut) {
    try {
      return (byte) CONFIG_READ.invokeExact(0L, 0L, configOut);
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  static int configModify(long config, long name, long value) {
    try {
      return (byte) CONFIG_MODIFY.invokeExact(config, name, value);
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  static void configRelease(long config) {
    try {
      CONFIG_RELEASE.invokeExact(config);
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  static int initVersion(int major, int minor, long params, long config, long contextOut) {
    try {
      return (byte) INIT_VERSION.invokeExact(major, minor, params, config, contextOut);
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  static void cleanup(long context) {
    try {
      CLEANUP.invokeExact(context);
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  static int workerCreate(long context, long params, long workerOut) {
    try {
      return (byte) WORKER_CREATE.invokeExact(context, params, workerOut);
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  static void workerDestroy(long worker) {
    try {
      WORKER_DESTROY.invokeExact(worker);
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  static int workerProgress(long worker) {
    try {
      return (int) WORKER_PROGRESS.invokeExact(worker);
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  static int workerGetEfd(long worker, long fdOut) {
    try {
      return (byte) WORKER_GET_EFD.invokeExact(worker, fdOut);
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  static int workerArm(long worker) {
    try {
      return (byte) WORKER_ARM.invokeExact(worker);
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  static int workerWait(long worker) {
    try {
      return (byte) WORKER_WAIT.invokeExact(worker);
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  static int workerSignal(long worker) {
    try {
      return (byte) WORKER_SIGNAL.invokeExact(worker);
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  static int workerGetAddress(long worker, long addressOut, long lengthOut) {
    try {
      return (byte) WORKER_GET_ADDRESS.invokeExact(worker, addressOut, lengthOut);
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  static void workerReleaseAddress(long worker, long address) {
    try {
      WORKER_RELEASE_ADDRESS.invokeExact(worker, address);
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  static long workerFlushNbx(long worker, long param) {
    try {
      return (long) WORKER_FLUSH_NBX.invokeExact(worker, param);
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  static int setAmRecvHandler(long worker, long param) {
    try {
      return (byte) SET_AM_RECV_HANDLER.invokeExact(worker, param);
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  static int epCreate(long worker, long params, long epOut) {
    try {
      return (byte) EP_CREATE.invokeExact(worker, params, epOut);
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  static long epCloseNbx(long ep, long param) {
    try {
      return (long) EP_CLOSE_NBX.invokeExact(ep, param);
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  static long epFlushNbx(long ep, long param) {
    try {
      return (long) EP_FLUSH_NBX.invokeExact(ep, param);
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  static void epPrintInfo(long ep, long file) {
    try {
      EP_PRINT_INFO.invokeExact(ep, file);
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  static int listenerCreate(long worker, long params, long listenerOut) {
    try {
      return (byte) LISTENER_CREATE.invokeExact(worker, params, listenerOut);
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  static void listenerDestroy(long listener) {
    try {
      LISTENER_DESTROY.invokeExact(listener);
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  static int listenerQuery(long listener, long attr) {
    try {
      return (byte) LISTENER_QUERY.invokeExact(listener, attr);
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  static int listenerReject(long listener, long connRequest) {
    try {
      return (byte) LISTENER_REJECT.invokeExact(listener, connRequest);
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  static int connRequestQuery(long connRequest, long attr) {
    try {
      return (byte) CONN_REQUEST_QUERY.invokeExact(connRequest, attr);
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  static int memMap(long context, long params, long memhOut) {
    try {
      return (byte) MEM_MAP.invokeExact(context, params, memhOut);
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  static int memUnmap(long context, long memh) {
    try {
      return (byte) MEM_UNMAP.invokeExact(context, memh);
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  static int memQuery(long memh, long attr) {
    try {
      return (byte) MEM_QUERY.invokeExact(memh, attr);
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  static int rkeyPack(long context, long memh, long bufferOut, long sizeOut) {
    try {
      return (byte) RKEY_PACK.invokeExact(context, memh, bufferOut, sizeOut);
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  static void rkeyBufferRelease(long buffer) {
    try {
      RKEY_BUFFER_RELEASE.invokeExact(buffer);
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  static int epRkeyUnpack(long ep, long buffer, long rkeyOut) {
    try {
      return (byte) EP_RKEY_UNPACK.invokeExact(ep, buffer, rkeyOut);
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  static int rkeyPtr(long rkey, long remoteAddress, long pointerOut) {
    try {
      return (byte) RKEY_PTR.invokeExact(rkey, remoteAddress, pointerOut);
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  static void rkeyDestroy(long rkey) {
    try {
      RKEY_DESTROY.invokeExact(rkey);
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  static void requestCancel(long worker, long request) {
    try {
      REQUEST_CANCEL.invokeExact(worker, request);
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  static String statusString(int status) {
    try {
      long p = (long) STATUS_STRING.invokeExact((byte) status);
      return p == 0 ? "status " + status : Memory.ALL.getString(p);
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  static long openMemstream(long bufferOut, long sizeOut) {
    try {
      return (long) OPEN_MEMSTREAM.invokeExact(bufferOut, sizeOut);
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  static int fclose(long file) {
    try {
      return (int) FCLOSE.invokeExact(file);
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  static void free(long pointer) {
    try {
      FREE.invokeExact(pointer);
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  static int poll(long fds, long count, int timeoutMillis) {
    try {
      return (int) POLL.invokeExact(fds, count, timeoutMillis);
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }
}
