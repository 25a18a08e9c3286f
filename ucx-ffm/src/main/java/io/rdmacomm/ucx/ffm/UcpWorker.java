package io.rdmacomm.ucx.ffm;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A UCP worker ({@code ucp_worker_h}): the progress engine that owns endpoints, listeners, active-message
 * handlers and requests. Every callback of this binding (active-message handlers, endpoint error
 * handlers, connection requests) runs inside {@link #progress()} on the thread that called it.
 *
 * <p>Thread safety depends on the {@link ThreadMode} it was created with. {@code SINGLE} and
 * {@code SERIALIZED}: the worker, its endpoints and its requests are used by one thread at a time (the
 * caller orders the calls; UCX takes no lock). {@code MULTI}: UCX locks the worker, so any thread may
 * progress it or send on its endpoints, and callbacks never run concurrently with each other; each
 * thread still needs its own {@link UcpRequest}s. {@link #signal()} is safe from any thread in every mode.
 */
public final class UcpWorker implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(UcpWorker.class);

  /** {@code ucs_thread_mode_t}. */
  public enum ThreadMode {
    /** One thread only. */
    SINGLE(UcpConst.UCS_THREAD_MODE_SINGLE),
    /** Several threads, one at a time (the caller serialises). */
    SERIALIZED(UcpConst.UCS_THREAD_MODE_SERIALIZED),
    /** Several threads concurrently (UCX locks). */
    MULTI(UcpConst.UCS_THREAD_MODE_MULTI);

    final int value;

    ThreadMode(int value) {
      this.value = value;
    }
  }

  private final UcpContext context;
  private final long handle;
  private final ThreadMode mode;
  /** Whether the data path may use critical downcalls; see {@link Native}. */
  final boolean critical;
  private final Arena arena = Arena.ofShared();
  private final AtomicBoolean closing = new AtomicBoolean();
  private volatile boolean destroyed;
  private final AtomicLong issued = new AtomicLong();
  private final AtomicLong freed = new AtomicLong();
  private final AtomicLong nextEndpointId = new AtomicLong(1);
  private final Map<Long, UcpEndpoint> endpoints = new ConcurrentHashMap<>();
  private final List<UcpRequest> requests = new CopyOnWriteArrayList<>();
  private final List<UcpListener> listeners = new CopyOnWriteArrayList<>();
  private final Map<Integer, AmMessage> amHandlers = new ConcurrentHashMap<>();
  private final MemorySegment errorStub;
  /**
   * The event fd's pollfd for {@link #awaitEvents} and {@link #awaitArmed}, made on first use; callers at the same
   * time write the same values into it.
   */
  private volatile MemorySegment pollfd;

  UcpWorker(UcpContext context, ThreadMode mode) {
    this.context = context;
    this.mode = mode;
    this.critical = mode != ThreadMode.MULTI;
    try (Arena call = Arena.ofConfined()) {
      MemorySegment params = call.allocate(Structs.UCP_WORKER_PARAMS);
      params.set(ValueLayout.JAVA_LONG, 0, UcpConst.UCP_WORKER_PARAM_FIELD_THREAD_MODE);
      params.set(ValueLayout.JAVA_INT, Structs.offset(Structs.UCP_WORKER_PARAMS, "thread_mode"), mode.value);
      MemorySegment out = call.allocate(ValueLayout.JAVA_LONG);
      UcxException.check(Native.workerCreate(context.handle(), params.address(), out.address()),
          "ucp_worker_create");
      this.handle = out.get(ValueLayout.JAVA_LONG, 0);
    } catch (RuntimeException e) {
      arena.close();
      throw e;
    }
    this.errorStub = Upcalls.endpointError(this, arena);
  }

  /** Runs pending work and callbacks once ({@code ucp_worker_progress}); returns how many events it handled. */
  public int progress() {
    return Native.workerProgress(handle);
  }

  /** This worker's address ({@code ucp_worker_get_address}), to hand to a peer's {@link #connect}. */
  public byte[] address() {
    checkOpen();
    try (Arena call = Arena.ofConfined()) {
      MemorySegment out = call.allocate(ValueLayout.JAVA_LONG, 2);
      UcxException.check(Native.workerGetAddress(handle, out.address(), out.address() + 8),
          "ucp_worker_get_address");
      long address = out.getAtIndex(ValueLayout.JAVA_LONG, 0);
      try {
        return Memory.toBytes(address, out.getAtIndex(ValueLayout.JAVA_LONG, 1));
      } finally {
        Native.workerReleaseAddress(handle, address);
      }
    }
  }

  /** The file descriptor that becomes readable when the {@linkplain #arm() armed} worker has events. */
  public int eventFd() {
    checkOpen();
    try (Arena call = Arena.ofConfined()) {
      MemorySegment out = call.allocate(ValueLayout.JAVA_INT);
      UcxException.check(Native.workerGetEfd(handle, out.address()), "ucp_worker_get_efd");
      return out.get(ValueLayout.JAVA_INT, 0);
    }
  }

  /**
   * Arms the event fd ({@code ucp_worker_arm}).
   *
   * @return {@code true} if armed; {@code false} if events are already waiting ({@code UCS_ERR_BUSY}):
   *     progress and try again
   */
  public boolean arm() {
    int s = Native.workerArm(handle);
    if (s == UcpConst.UCS_ERR_BUSY) {
      return false;
    }
    UcxException.check(s, "ucp_worker_arm");
    return true;
  }

  /**
   * Blocks in {@code ucp_worker_wait} until the worker has events or {@link #signal()} is called; has no
   * timeout of its own, so another thread must be able to signal. Prefer {@link #awaitEvents}.
   */
  public void waitForEvents() {
    UcxException.check(Native.workerWait(handle), "ucp_worker_wait");
  }

  /**
   * Arms the worker and waits up to {@code timeout} for its event fd; {@link #signal()} ends the wait
   * early. Returns {@code true} if there may be events to progress, {@code false} on timeout.
   */
  public boolean awaitEvents(long timeout, TimeUnit unit) {
    if (!arm()) {
      return true;
    }
    return pollEventFd(unit.toMillis(timeout));
  }

  /**
   * Waits up to {@code timeoutNanos} (rounded up to a millisecond) for the event fd of a worker the caller
   * {@linkplain #arm() armed}; {@link #signal()} ends the wait early. Allocates nothing after the first call.
   * Returns {@code true} if there may be events to progress, {@code false} on timeout.
   */
  public boolean awaitArmed(long timeoutNanos) {
    return pollEventFd((Math.max(0, timeoutNanos) + 999_999) / 1_000_000);
  }

  /** Polls the event fd up to {@code millis}; true unless the time ran out. */
  private boolean pollEventFd(long millis) {
    MemorySegment fds = pollfd;
    if (fds == null) {
      fds = arena.allocate(8, 4);
      fds.set(ValueLayout.JAVA_INT, 0, eventFd());
      fds.set(ValueLayout.JAVA_SHORT, 4, (short) 1); // POLLIN
      pollfd = fds;
    }
    int n = Native.poll(fds.address(), 1, (int) Math.min(Integer.MAX_VALUE, millis));
    // -1 is EINTR in practice: report "maybe", the caller progresses and comes back
    return n != 0;
  }

  /** Wakes a thread blocked in {@link #waitForEvents()} or {@link #awaitEvents}; any thread may call it. */
  public void signal() {
    UcxException.check(Native.workerSignal(handle), "ucp_worker_signal");
  }

  /** A new reusable request slot for operations on this worker and its endpoints; lives as long as the worker. */
  public UcpRequest newRequest() {
    checkOpen();
    UcpRequest request = new UcpRequest(this, arena.allocate(UcpRequest.nativeSize(), 8));
    requests.add(request);
    return request;
  }

  /** Flushes every endpoint of the worker ({@code ucp_worker_flush_nbx}). */
  public void flush(UcpRequest request) {
    long param = request.prepare(0);
    request.started(Native.workerFlushNbx(handle, param));
  }

  /**
   * Connects to a peer worker by its address (obtained out of band, e.g. over a socket). UCX's
   * connection manager is not involved.
   */
  public UcpEndpoint connect(byte[] remoteWorkerAddress, UcpEndpoint.ErrorMode errorMode,
      UcpEndpoint.ErrorHandler errorHandler) {
    checkOpen();
    return UcpEndpoint.toWorkerAddress(this, remoteWorkerAddress, errorMode, errorHandler);
  }

  /** Connects to a {@link UcpListener} at {@code address} through UCX's connection manager. */
  public UcpEndpoint connect(InetSocketAddress address, UcpEndpoint.ErrorMode errorMode,
      UcpEndpoint.ErrorHandler errorHandler) {
    checkOpen();
    return UcpEndpoint.toSocketAddress(this, address, errorMode, errorHandler);
  }

  /**
   * Listens on {@code address} (port 0 picks one, see {@link UcpListener#address()}). Each connection
   * request is handed to {@code onRequest} inside {@link #progress()}, which must
   * {@linkplain UcpConnectionRequest#accept accept} or {@linkplain UcpConnectionRequest#reject reject} it.
   */
  public UcpListener listen(InetSocketAddress address, Consumer<UcpConnectionRequest> onRequest) {
    checkOpen();
    UcpListener listener = UcpListener.create(this, address, onRequest);
    listeners.add(listener);
    return listener;
  }

  /**
   * Installs (or with {@code null} removes) the handler for active messages with {@code id}. The handler
   * runs inside {@link #progress()}; see {@link AmMessage} for what it may do.
   */
  public void setAmHandler(int id, AmHandler handler) {
    checkOpen();
    MemorySegment stub = MemorySegment.NULL;
    AmMessage message = null;
    if (handler != null) {
      message = new AmMessage(this, handler);
      stub = Upcalls.amReceive(message, arena);
    }
    try (Arena call = Arena.ofConfined()) {
      MemorySegment p = call.allocate(Structs.UCP_AM_HANDLER_PARAM);
      p.set(ValueLayout.JAVA_LONG, 0, UcpConst.UCP_AM_HANDLER_PARAM_FIELD_ID
          | UcpConst.UCP_AM_HANDLER_PARAM_FIELD_FLAGS | UcpConst.UCP_AM_HANDLER_PARAM_FIELD_CB);
      p.set(ValueLayout.JAVA_INT, Structs.offset(Structs.UCP_AM_HANDLER_PARAM, "id"), id);
      p.set(ValueLayout.JAVA_INT, Structs.offset(Structs.UCP_AM_HANDLER_PARAM, "flags"),
          UcpConst.UCP_AM_FLAG_WHOLE_MSG);
      p.set(ValueLayout.JAVA_LONG, Structs.offset(Structs.UCP_AM_HANDLER_PARAM, "cb"), stub.address());
      UcxException.check(Native.setAmRecvHandler(handle, p.address()), "ucp_worker_set_am_recv_handler");
    }
    // the replaced stub stays in the worker's arena: UCX may not call it again, but freeing it buys nothing
    if (message == null) {
      amHandlers.remove(id);
    } else {
      amHandlers.put(id, message);
    }
  }

  /** Posts a tag receive into {@code buffer} for messages whose tag matches {@code tag} under {@code tagMask}. */
  public void tagRecv(MemorySegment buffer, long tag, long tagMask, UcpRequest request) {
    long param = request.prepareTagRecv();
    request.started(NativeData.tagRecvNbx(critical, handle, Memory.address(buffer), buffer.byteSize(), tag, tagMask,
        param));
  }

  /**
   * Receives the data of an active message kept with {@link AmMessage#keep()} or announced by rendezvous
   * ({@code ucp_am_recv_data_nbx}); {@code descriptor} is {@link AmMessage#dataAddress()}. UCX owns the
   * descriptor from then on, even if the receive fails.
   */
  public void receiveAmData(long descriptor, MemorySegment buffer, UcpRequest request) {
    receiveAmData(descriptor, Memory.address(buffer), buffer.byteSize(), request);
  }

  void receiveAmData(long descriptor, long address, long length, UcpRequest request) {
    long param = request.prepareAmRecv(length);
    request.started(NativeData.amRecvDataNbx(critical, handle, descriptor, address, length, param));
  }

  /** Releases the data of an active message kept with {@link AmMessage#keep()} ({@code ucp_am_data_release}). */
  public void releaseAmData(long dataAddress) {
    NativeData.amDataRelease(critical, handle, dataAddress);
  }

  /** Requests handed out by libucp and not yet freed; 0 once every operation has been seen done. */
  public long outstandingRequests() {
    return issued.get() - freed.get();
  }

  /** Request handles libucp has returned so far (tests compare it with {@link #outstandingRequests()}). */
  long requestsIssued() {
    return issued.get();
  }

  /** The thread mode the worker was created with. */
  public ThreadMode threadMode() {
    return mode;
  }

  void requestIssued() {
    issued.incrementAndGet();
  }

  void requestFreed() {
    freed.incrementAndGet();
  }

  long handle() {
    return handle;
  }

  UcpContext context() {
    return context;
  }

  MemorySegment errorStub() {
    return errorStub;
  }

  long register(UcpEndpoint endpoint) {
    long id = nextEndpointId.getAndIncrement();
    endpoints.put(id, endpoint);
    return id;
  }

  void unregister(UcpEndpoint endpoint) {
    endpoints.remove(endpoint.id());
  }

  void unregister(UcpListener listener) {
    listeners.remove(listener);
  }

  /** Called by the error upcall, inside progress. */
  void endpointFailed(long endpointId, int status) {
    UcpEndpoint endpoint = endpoints.get(endpointId);
    if (endpoint == null) {
      LOG.debug("error {} for endpoint {} that is already closed", status, endpointId);
      return;
    }
    endpoint.failed(status);
  }

  void checkOpen() {
    if (destroyed) {
      throw new IllegalStateException("worker closed");
    }
  }

  /**
   * Closes what is still open (listeners; endpoints by force, so peers see an error), gives every still
   * pending request back to libucp, destroys the worker and frees its upcall stubs. Idempotent.
   */
  @Override
  public void close() {
    if (!closing.compareAndSet(false, true)) {
      return;
    }
    for (UcpListener listener : listeners) {
      listener.close();
    }
    for (UcpEndpoint endpoint : endpoints.values()) {
      endpoint.closeOnWorkerClose();
    }
    for (UcpRequest request : requests) {
      request.abandon();
    }
    if (outstandingRequests() != 0) {
      LOG.warn("worker closed with {} requests unaccounted for", outstandingRequests());
    }
    destroyed = true;
    Native.workerDestroy(handle);
    arena.close();
    context.closed(this);
  }
}
