package io.rdmacomm.ucx.ffm;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;

/**
 * A client asking a {@link UcpListener} for a connection ({@code ucp_conn_request_h}). Exactly one of
 * {@link #accept} or {@link #reject} must be called, from the listener's callback or later on the worker's
 * thread; UCX holds the request until then.
 */
public final class UcpConnectionRequest {
  private final UcpWorker worker;
  private final UcpListener listener;
  private final long handle;
  private boolean answered;

  UcpConnectionRequest(UcpWorker worker, UcpListener listener, long handle) {
    this.worker = worker;
    this.listener = listener;
    this.handle = handle;
  }

  /** The client's address ({@code ucp_conn_request_query}). */
  public InetSocketAddress clientAddress() {
    try (Arena call = Arena.ofConfined()) {
      MemorySegment attr = call.allocate(Structs.UCP_CONN_REQUEST_ATTR);
      attr.set(ValueLayout.JAVA_LONG, 0, UcpConst.UCP_CONN_REQUEST_ATTR_FIELD_CLIENT_ADDR);
      UcxException.check(Native.connRequestQuery(handle, attr.address()), "ucp_conn_request_query");
      return SocketAddresses.fromNative(
          attr.asSlice(Structs.offset(Structs.UCP_CONN_REQUEST_ATTR, "client_address")));
    }
  }

  /** Creates the server-side endpoint for this request. */
  public UcpEndpoint accept(UcpEndpoint.ErrorMode errorMode, UcpEndpoint.ErrorHandler errorHandler) {
    answer();
    return UcpEndpoint.fromConnectionRequest(worker, handle, errorMode, errorHandler);
  }

  /** Refuses the connection ({@code ucp_listener_reject}). */
  public void reject() {
    answer();
    listener.reject(handle);
  }

  private void answer() {
    worker.checkOpen();
    if (answered) {
      throw new IllegalStateException("connection request already answered");
    }
    answered = true;
  }
}
