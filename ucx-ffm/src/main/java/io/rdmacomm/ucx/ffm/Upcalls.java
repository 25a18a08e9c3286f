package io.rdmacomm.ucx.ffm;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Function pointers libucp calls back into Java. Each stub is bound to its Java target object, so the
 * C {@code void *arg} is not needed to find it (the error handler uses it for the endpoint id).
 *
 * <p>An exception that escapes an upcall terminates the JVM, so every target catches {@link Throwable}
 * itself; a target never throws.
 */
final class Upcalls {
  private static final Logger LOG = LoggerFactory.getLogger(Upcalls.class);
  private static final Linker LINKER = Linker.nativeLinker();
  private static final MethodHandles.Lookup LOOKUP = MethodHandles.lookup();

  /**
   * {@code ucs_status_t (*)(void *arg, const void *header, size_t, void *data, size_t,
   * const ucp_am_recv_param_t *)}
   */
  private static final FunctionDescriptor AM_RECV = FunctionDescriptor.of(JAVA_BYTE,
      JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG);
  /** {@code void (*)(void *arg, ucp_ep_h ep, ucs_status_t status)} */
  private static final FunctionDescriptor EP_ERROR = FunctionDescriptor.ofVoid(JAVA_LONG, JAVA_LONG, JAVA_BYTE);
  /** {@code void (*)(ucp_conn_request_h conn_request, void *arg)} */
  private static final FunctionDescriptor CONN_REQUEST = FunctionDescriptor.ofVoid(JAVA_LONG, JAVA_LONG);

  private static final MethodHandle AM_TARGET;
  private static final MethodHandle ERROR_TARGET;
  private static final MethodHandle CONN_TARGET;

  static {
    try {
      AM_TARGET = LOOKUP.findStatic(Upcalls.class, "onAmReceive", MethodType.methodType(byte.class,
          AmMessage.class, long.class, long.class, long.class, long.class, long.class, long.class));
      ERROR_TARGET = LOOKUP.findStatic(Upcalls.class, "onEndpointError", MethodType.methodType(void.class,
          UcpWorker.class, long.class, long.class, byte.class));
      CONN_TARGET = LOOKUP.findStatic(Upcalls.class, "onConnectionRequest", MethodType.methodType(void.class,
          UcpListener.class, long.class, long.class));
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  private Upcalls() {}

  static MemorySegment amReceive(AmMessage message, Arena arena) {
    return LINKER.upcallStub(AM_TARGET.bindTo(message), AM_RECV, arena);
  }

  static MemorySegment endpointError(UcpWorker worker, Arena arena) {
    return LINKER.upcallStub(ERROR_TARGET.bindTo(worker), EP_ERROR, arena);
  }

  static MemorySegment connectionRequest(UcpListener listener, Arena arena) {
    return LINKER.upcallStub(CONN_TARGET.bindTo(listener), CONN_REQUEST, arena);
  }

  private static byte onAmReceive(AmMessage message, long arg, long header, long headerLength, long data,
      long length, long param) {
    try {
      return message.dispatch(header, headerLength, data, length, param);
    } catch (Throwable t) {
      return failed("active-message handler", t);
    }
  }

  private static void onEndpointError(UcpWorker worker, long endpointId, long ep, byte status) {
    try {
      worker.endpointFailed(endpointId, status);
    } catch (Throwable t) {
      failed("endpoint error handler", t);
    }
  }

  private static void onConnectionRequest(UcpListener listener, long connRequest, long arg) {
    try {
      listener.onRequest(connRequest);
    } catch (Throwable t) {
      failed("connection request handler", t);
    }
  }

  private static byte failed(String what, Throwable t) {
    try {
      LOG.error("{} threw; UCX carries on as if it had returned", what, t);
    } catch (Throwable ignored) {
      // logging itself failed (e.g. out of memory): nothing left to do but not kill the JVM
    }
    return UcpConst.UCS_OK;
  }
}
