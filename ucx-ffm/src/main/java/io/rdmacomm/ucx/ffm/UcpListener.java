package io.rdmacomm.ucx.ffm;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

/**
 * A UCX connection-manager listener ({@code ucp_listener_h}), made by {@link UcpWorker#listen}. Only for
 * peers that connect by socket address; the project's primary path exchanges worker addresses instead.
 *
 * <p>Thread safety: as its {@link UcpWorker}.
 */
public final class UcpListener implements AutoCloseable {
  private final UcpWorker worker;
  private final Consumer<UcpConnectionRequest> onRequest;
  private final Arena arena = Arena.ofShared();
  private final AtomicBoolean closed = new AtomicBoolean();
  private long handle;

  private UcpListener(UcpWorker worker, Consumer<UcpConnectionRequest> onRequest) {
    this.worker = worker;
    this.onRequest = onRequest;
  }

  static UcpListener create(UcpWorker worker, InetSocketAddress address, Consumer<UcpConnectionRequest> onRequest) {
    UcpListener listener = new UcpListener(worker, onRequest);
    try (Arena call = Arena.ofConfined()) {
      MemorySegment params = call.allocate(Structs.UCP_LISTENER_PARAMS);
      MemorySegment sockaddr = SocketAddresses.toNative(address, call);
      params.set(ValueLayout.JAVA_LONG, 0,
          UcpConst.UCP_LISTENER_PARAM_FIELD_SOCK_ADDR | UcpConst.UCP_LISTENER_PARAM_FIELD_CONN_HANDLER);
      params.set(ValueLayout.JAVA_LONG, Structs.offset(Structs.UCP_LISTENER_PARAMS, "sockaddr", "addr"),
          sockaddr.address());
      params.set(ValueLayout.JAVA_INT, Structs.offset(Structs.UCP_LISTENER_PARAMS, "sockaddr", "addrlen"),
          (int) sockaddr.byteSize());
      params.set(ValueLayout.JAVA_LONG, Structs.offset(Structs.UCP_LISTENER_PARAMS, "conn_handler", "cb"),
          Upcalls.connectionRequest(listener, listener.arena).address());
      MemorySegment out = call.allocate(ValueLayout.JAVA_LONG);
      UcxException.check(Native.listenerCreate(worker.handle(), params.address(), out.address()),
          "ucp_listener_create");
      listener.handle = out.get(ValueLayout.JAVA_LONG, 0);
      return listener;
    } catch (RuntimeException e) {
      listener.arena.close();
      throw e;
    }
  }

  /** The address the listener is bound to ({@code ucp_listener_query}), with the port chosen for port 0. */
  public InetSocketAddress address() {
    try (Arena call = Arena.ofConfined()) {
      MemorySegment attr = call.allocate(Structs.UCP_LISTENER_ATTR);
      attr.set(ValueLayout.JAVA_LONG, 0, UcpConst.UCP_LISTENER_ATTR_FIELD_SOCKADDR);
      UcxException.check(Native.listenerQuery(handle, attr.address()), "ucp_listener_query");
      return SocketAddresses.fromNative(attr.asSlice(Structs.offset(Structs.UCP_LISTENER_ATTR, "sockaddr")));
    }
  }

  void onRequest(long connRequest) {
    onRequest.accept(new UcpConnectionRequest(worker, this, connRequest));
  }

  void reject(long connRequest) {
    UcxException.check(Native.listenerReject(handle, connRequest), "ucp_listener_reject");
  }

  /** {@code ucp_listener_destroy}; endpoints already accepted stay open. Idempotent. */
  @Override
  public void close() {
    if (closed.compareAndSet(false, true)) {
      Native.listenerDestroy(handle);
      arena.close();
      worker.unregister(this);
    }
  }
}
