package io.rdmacomm.ucx.ffm;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A connection to one peer worker ({@code ucp_ep_h}). Data operations take a {@link UcpRequest} and
 * return at once; see there for how completion is learnt.
 *
 * <p>Thread safety: as its {@link UcpWorker}.
 */
public final class UcpEndpoint implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(UcpEndpoint.class);

  /** {@code UCP_AM_SEND_FLAG_REPLY}: the receiver gets a reply endpoint ({@link AmMessage#reply}). */
  public static final int AM_REPLY = UcpConst.UCP_AM_SEND_FLAG_REPLY;
  /** {@code UCP_AM_SEND_FLAG_EAGER}: force the eager protocol. */
  public static final int AM_EAGER = UcpConst.UCP_AM_SEND_FLAG_EAGER;
  /** {@code UCP_AM_SEND_FLAG_RNDV}: force the rendezvous protocol. */
  public static final int AM_RNDV = UcpConst.UCP_AM_SEND_FLAG_RNDV;

  /** {@code ucp_err_handling_mode_t}. */
  public enum ErrorMode {
    /** No error handling: fastest, but a dead peer may go unnoticed or hang operations. */
    NONE(UcpConst.UCP_ERR_HANDLING_MODE_NONE),
    /** Peer failures are detected and reported to the {@link ErrorHandler}; UCX may pick other transports. */
    PEER(UcpConst.UCP_ERR_HANDLING_MODE_PEER);

    final int value;

    ErrorMode(int value) {
      this.value = value;
    }
  }

  /** How {@link #close(CloseMode, long, TimeUnit)} ends the connection. */
  public enum CloseMode {
    /** Complete outstanding operations and tell the peer. */
    FLUSH,
    /** Drop everything at once ({@code UCP_EP_CLOSE_FLAG_FORCE}); the only choice after a failure. */
    FORCE
  }

  /** Told about a failed endpoint, inside {@link UcpWorker#progress()}. */
  @FunctionalInterface
  public interface ErrorHandler {
    /** The endpoint can no longer be used except to {@link #close()} it (which then forces). */
    void onError(UcpEndpoint endpoint, UcxException cause);
  }

  private final UcpWorker worker;
  private final long id;
  private final ErrorHandler errorHandler;
  private final AtomicBoolean closed = new AtomicBoolean();
  private long handle;
  private volatile int failure;

  private UcpEndpoint(UcpWorker worker, ErrorHandler errorHandler) {
    this.worker = worker;
    this.errorHandler = errorHandler;
    this.id = worker.register(this);
  }

  static UcpEndpoint toWorkerAddress(UcpWorker worker, byte[] address, ErrorMode mode, ErrorHandler handler) {
    try (Arena call = Arena.ofConfined()) {
      MemorySegment params = call.allocate(Structs.UCP_EP_PARAMS);
      set(params, UcpConst.UCP_EP_PARAM_FIELD_REMOTE_ADDRESS, "address", call.allocateFrom(ValueLayout.JAVA_BYTE,
          address).address());
      return create(worker, params, mode, handler);
    }
  }

  static UcpEndpoint toSocketAddress(UcpWorker worker, InetSocketAddress address, ErrorMode mode,
      ErrorHandler handler) {
    try (Arena call = Arena.ofConfined()) {
      MemorySegment params = call.allocate(Structs.UCP_EP_PARAMS);
      MemorySegment sockaddr = SocketAddresses.toNative(address, call);
      set(params, UcpConst.UCP_EP_PARAM_FIELD_SOCK_ADDR, "sockaddr.addr", sockaddr.address());
      params.set(ValueLayout.JAVA_INT, Structs.offset(Structs.UCP_EP_PARAMS, "sockaddr", "addrlen"),
          (int) sockaddr.byteSize());
      params.set(ValueLayout.JAVA_INT, Structs.offset(Structs.UCP_EP_PARAMS, "flags"),
          UcpConst.UCP_EP_PARAMS_FLAGS_CLIENT_SERVER);
      addMask(params, UcpConst.UCP_EP_PARAM_FIELD_FLAGS);
      return create(worker, params, mode, handler);
    }
  }

  static UcpEndpoint fromConnectionRequest(UcpWorker worker, long connRequest, ErrorMode mode,
      ErrorHandler handler) {
    try (Arena call = Arena.ofConfined()) {
      MemorySegment params = call.allocate(Structs.UCP_EP_PARAMS);
      set(params, UcpConst.UCP_EP_PARAM_FIELD_CONN_REQUEST, "conn_request", connRequest);
      return create(worker, params, mode, handler);
    }
  }

  private static void set(MemorySegment params, long maskBit, String field, long value) {
    String[] path = field.split("\\.");
    params.set(ValueLayout.JAVA_LONG, Structs.offset(Structs.UCP_EP_PARAMS, path), value);
    addMask(params, maskBit);
  }

  private static void addMask(MemorySegment params, long maskBit) {
    params.set(ValueLayout.JAVA_LONG, 0, params.get(ValueLayout.JAVA_LONG, 0) | maskBit);
  }

  private static UcpEndpoint create(UcpWorker worker, MemorySegment params, ErrorMode mode, ErrorHandler handler) {
    UcpEndpoint endpoint = new UcpEndpoint(worker, handler);
    try (Arena call = Arena.ofConfined()) {
      params.set(ValueLayout.JAVA_INT, Structs.offset(Structs.UCP_EP_PARAMS, "err_mode"), mode.value);
      set(params, UcpConst.UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE | UcpConst.UCP_EP_PARAM_FIELD_ERR_HANDLER,
          "err_handler.cb", worker.errorStub().address());
      // the handler's arg is the endpoint id: the upcall finds the endpoint without a pointer-keyed map
      params.set(ValueLayout.JAVA_LONG, Structs.offset(Structs.UCP_EP_PARAMS, "err_handler", "arg"), endpoint.id);
      MemorySegment out = call.allocate(ValueLayout.JAVA_LONG);
      UcxException.check(Native.epCreate(worker.handle(), params.address(), out.address()), "ucp_ep_create");
      endpoint.handle = out.get(ValueLayout.JAVA_LONG, 0);
      return endpoint;
    } catch (RuntimeException e) {
      worker.unregister(endpoint);
      throw e;
    }
  }

  /**
   * Sends an active message ({@code ucp_am_send_nbx}) to the peer's handler for {@code id}. The header
   * and data must stay untouched until {@code request} is done.
   *
   * @param header may be {@link MemorySegment#NULL}
   * @param flags  {@link #AM_REPLY}, {@link #AM_EAGER}, {@link #AM_RNDV} or'ed, or 0
   */
  public void amSend(int id, MemorySegment header, MemorySegment data, int flags, UcpRequest request) {
    amSend(id, Memory.address(header), header.byteSize(), Memory.address(data), data.byteSize(), flags, request);
  }

  /**
   * {@link #amSend(int, MemorySegment, MemorySegment, int, UcpRequest)} with raw native addresses, for
   * callers that send from parts of a larger buffer without making a segment per message. The memory must
   * be native and stay untouched until {@code request} is done.
   */
  public void amSend(int id, long header, long headerLength, long data, long dataLength, int flags,
      UcpRequest request) {
    checkOpen();
    long param = request.prepare(flags);
    request.started(NativeData.amSendNbx(worker.critical, handle, id, header, headerLength, data, dataLength, param));
  }

  static void amSend(UcpWorker worker, long ep, int id, MemorySegment header, MemorySegment data, int flags,
      UcpRequest request) {
    long param = request.prepare(flags);
    request.started(NativeData.amSendNbx(worker.critical, ep, id, Memory.address(header), header.byteSize(),
        Memory.address(data), data.byteSize(), param));
  }

  /** Sends {@code data} with a tag ({@code ucp_tag_send_nbx}). */
  public void tagSend(long tag, MemorySegment data, UcpRequest request) {
    checkOpen();
    long param = request.prepare(0);
    request.started(NativeData.tagSendNbx(worker.critical, handle, Memory.address(data), data.byteSize(), tag, param));
  }

  /** Writes {@code source} to the peer's {@code remoteAddress} ({@code ucp_put_nbx}); completion is local. */
  public void put(MemorySegment source, long remoteAddress, UcpRemoteKey key, UcpRequest request) {
    put(Memory.address(source), source.byteSize(), remoteAddress, key, request);
  }

  /** {@link #put(MemorySegment, long, UcpRemoteKey, UcpRequest)} from a raw native address. */
  public void put(long source, long length, long remoteAddress, UcpRemoteKey key, UcpRequest request) {
    checkOpen();
    long param = request.prepare(0);
    request.started(NativeData.putNbx(worker.critical, handle, source, length, remoteAddress, key.handle(), param));
  }

  /** {@link #get(MemorySegment, long, UcpRemoteKey, UcpRequest)} into a raw native address. */
  public void get(long target, long length, long remoteAddress, UcpRemoteKey key, UcpRequest request) {
    checkOpen();
    long param = request.prepare(0);
    request.started(NativeData.getNbx(worker.critical, handle, target, length, remoteAddress, key.handle(), param));
  }

  /** Reads the peer's {@code remoteAddress} into {@code target} ({@code ucp_get_nbx}). */
  public void get(MemorySegment target, long remoteAddress, UcpRemoteKey key, UcpRequest request) {
    get(Memory.address(target), target.byteSize(), remoteAddress, key, request);
  }

  /** Completes every operation issued on this endpoint, remotely too ({@code ucp_ep_flush_nbx}). */
  public void flush(UcpRequest request) {
    checkOpen();
    long param = request.prepare(0);
    request.started(Native.epFlushNbx(handle, param));
  }

  /** Unpacks a key the peer made with {@link UcpMemory#packRemoteKey()} ({@code ucp_ep_rkey_unpack}). */
  public UcpRemoteKey unpackRemoteKey(byte[] packed) {
    checkOpen();
    try (Arena call = Arena.ofConfined()) {
      MemorySegment out = call.allocate(ValueLayout.JAVA_LONG);
      int s = Native.epRkeyUnpack(handle, call.allocateFrom(ValueLayout.JAVA_BYTE, packed).address(),
          out.address());
      UcxException.check(s, "ucp_ep_rkey_unpack");
      return new UcpRemoteKey(out.get(ValueLayout.JAVA_LONG, 0));
    }
  }

  /** UCX's description of the endpoint ({@code ucp_ep_print_info}): the transports and lanes it uses. */
  public String describe() {
    checkOpen();
    try (Arena call = Arena.ofConfined()) {
      MemorySegment out = call.allocate(ValueLayout.JAVA_LONG, 2);
      long file = Native.openMemstream(out.address(), out.address() + 8);
      if (file == 0) {
        throw new IllegalStateException("open_memstream failed");
      }
      Native.epPrintInfo(handle, file);
      Native.fclose(file);
      long text = out.getAtIndex(ValueLayout.JAVA_LONG, 0);
      try {
        return new String(Memory.toBytes(text, out.getAtIndex(ValueLayout.JAVA_LONG, 1)), StandardCharsets.UTF_8);
      } finally {
        Native.free(text);
      }
    }
  }

  /** Whether UCX reported this endpoint failed (only with {@link ErrorMode#PEER}). */
  public boolean isFailed() {
    return failure != 0;
  }

  /** The {@code ucs_status_t} UCX reported the endpoint failed with, or 0. */
  public int failureStatus() {
    return failure;
  }

  void failed(int status) {
    failure = status;
    LOG.debug("endpoint {} failed: {}", id, status);
    if (errorHandler != null) {
      errorHandler.onError(this, new UcxException("endpoint failed", status));
    }
  }

  /**
   * Starts closing ({@code ucp_ep_close_nbx}); {@code request} tells when it is done. A failed endpoint is
   * always forced. Closing with {@link CloseMode#FLUSH} may need the peer to progress too.
   */
  public void close(CloseMode mode, UcpRequest request) {
    if (!closed.compareAndSet(false, true)) {
      throw new IllegalStateException("endpoint already closed");
    }
    worker.unregister(this);
    int flags = mode == CloseMode.FORCE || isFailed() ? UcpConst.UCP_EP_CLOSE_FLAG_FORCE : 0;
    long param = request.prepare(flags);
    request.started(Native.epCloseNbx(handle, param));
  }

  /**
   * Closes and progresses the worker until done or {@code timeout}; returns the close's
   * {@code ucs_status_t} (an error such as {@code UCS_ERR_CONNECTION_RESET} when the peer is gone, or
   * {@link UcxException#TIMED_OUT}). Either way the endpoint is unusable afterwards and its request freed.
   */
  public int close(CloseMode mode, long timeout, TimeUnit unit) {
    try (Arena call = Arena.ofConfined()) {
      // a private request: closing must work while the worker is shutting down, and costs no worker memory
      UcpRequest request = new UcpRequest(worker, call.allocate(UcpRequest.nativeSize(), 8));
      try {
        close(mode, request);
        request.await(timeout, unit);
        return UcpConst.UCS_OK;
      } catch (UcxException e) {
        LOG.debug("closing endpoint {}: {}", id, e.getMessage());
        return e.status();
      } finally {
        request.abandon();
      }
    }
  }

  /** Closes with {@link CloseMode#FLUSH} (forced if failed), waiting at most 10 seconds. Idempotent. */
  @Override
  public void close() {
    if (!closed.get()) {
      close(CloseMode.FLUSH, 10, TimeUnit.SECONDS);
    }
  }

  /** Worker shutdown: force, progress briefly, never throw. */
  void closeOnWorkerClose() {
    if (!closed.get()) {
      int s = close(CloseMode.FORCE, 1, TimeUnit.SECONDS);
      LOG.debug("endpoint {} force-closed with its worker: {}", id, s);
    }
  }

  long id() {
    return id;
  }

  /**
   * The {@code ucp_ep_h} as a number, only to recognise this endpoint in {@link AmMessage#replyEndpointHandle()}
   * (a receiver that serves several peers on one worker learns which one sent a message); never dereferenced.
   */
  public long nativeHandle() {
    return handle;
  }

  /** UCX frees the endpoint once closed: using the handle after that would crash the process, not throw. */
  private void checkOpen() {
    if (closed.get()) {
      throw new IllegalStateException("endpoint closed");
    }
  }
}
