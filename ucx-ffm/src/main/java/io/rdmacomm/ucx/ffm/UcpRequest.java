package io.rdmacomm.ucx.ffm;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.TimeUnit;

/**
 * A reusable slot for one outstanding operation, created by {@link UcpWorker#newRequest()}.
 *
 * <p>Every operation of this binding takes a request and issues the libucp call with a
 * {@code ucp_request_param_t} that has no callback, so libucp answers in one of three ways: {@code NULL}
 * (completed inside the call), an error pointer (failed), or a request handle. The first two leave this
 * object {@linkplain #isDone() done} at once; a handle is polled with {@code ucp_request_check_status}
 * (which does not progress the worker: {@link #await(long, TimeUnit)} does both) and freed with
 * {@code ucp_request_free} the moment it is seen complete. Each handle is therefore freed exactly once,
 * by this object; {@link UcpWorker#close()} frees the handles of requests still pending. Issuing a new
 * operation while the previous one is pending throws, so a handle can never be overwritten and lost.
 *
 * <p>The parameter struct lives in native memory owned by this request and is rewritten per operation:
 * issuing and polling allocate nothing on the Java heap.
 *
 * <p>Not thread-safe: one thread at a time issues and polls a given request.
 */
public final class UcpRequest {
  private static final long PARAM_SIZE = Structs.UCP_REQUEST_PARAM.byteSize();
  private static final long INFO_SIZE = Structs.UCP_TAG_RECV_INFO.byteSize();
  private static final int KIND_OTHER = 0;
  private static final int KIND_TAG_RECV = 1;
  private static final int KIND_AM_RECV = 2;

  private final UcpWorker worker;
  private final long param;
  private final long info;
  private final long length;
  private long handle;
  private boolean pending;
  private int kind;
  private int status = UcpConst.UCS_OK;
  private long receivedLength;
  private long senderTag;

  UcpRequest(UcpWorker worker, MemorySegment memory) {
    this.worker = worker;
    this.param = memory.address();
    this.info = param + PARAM_SIZE;
    this.length = info + INFO_SIZE;
  }

  static long nativeSize() {
    return PARAM_SIZE + INFO_SIZE + Long.BYTES;
  }

  /** Prepares the parameter struct for a send-like operation; returns its address. */
  long prepare(int flags) {
    begin(KIND_OTHER);
    Memory.writeInt(param + Structs.REQ_OP_ATTR_MASK, flags == 0 ? 0 : UcpConst.UCP_OP_ATTR_FIELD_FLAGS);
    Memory.writeInt(param + Structs.REQ_FLAGS, flags);
    return param;
  }

  /** Prepares a tag receive: libucp fills the tag info when it completes the receive inside the call. */
  long prepareTagRecv() {
    begin(KIND_TAG_RECV);
    Memory.writeInt(param + Structs.REQ_OP_ATTR_MASK, UcpConst.UCP_OP_ATTR_FIELD_RECV_INFO);
    Memory.writeLong(param + Structs.REQ_RECV_INFO, info);
    return param;
  }

  /** Prepares an active-message data receive of {@code count} bytes. */
  long prepareAmRecv(long count) {
    begin(KIND_AM_RECV);
    Memory.writeInt(param + Structs.REQ_OP_ATTR_MASK, UcpConst.UCP_OP_ATTR_FIELD_RECV_INFO);
    Memory.writeLong(param + Structs.REQ_RECV_INFO, length);
    Memory.writeLong(length, count);
    return param;
  }

  private void begin(int newKind) {
    if (pending) {
      throw new IllegalStateException("request still pending; wait for it or use another request");
    }
    worker.checkOpen();
    kind = newKind;
    receivedLength = 0;
    senderTag = 0;
  }

  /** Records what the libucp call returned ({@code ucs_status_ptr_t}). */
  void started(long result) {
    if (result == 0) {
      complete(UcpConst.UCS_OK);
    } else if (Long.compareUnsigned(result, UcpConst.UCS_ERR_LAST) >= 0) {
      // UCS_PTR_IS_ERR: the small negative status values, seen as pointers, sit at the top of the space
      status = (int) result;
    } else {
      handle = result;
      pending = true;
      status = UcpConst.UCS_INPROGRESS;
      worker.requestIssued();
    }
  }

  private void complete(int finalStatus) {
    status = finalStatus;
    if (kind == KIND_TAG_RECV) {
      receivedLength = Memory.readLong(info + Structs.TAG_INFO_LENGTH);
      senderTag = Memory.readLong(info + Structs.TAG_INFO_SENDER_TAG);
    } else if (kind == KIND_AM_RECV) {
      receivedLength = Memory.readLong(length);
    }
  }

  /**
   * Whether the operation has finished, successfully or not. Checks the handle without progressing the
   * worker; a handle seen complete is freed here.
   */
  public boolean isDone() {
    if (!pending) {
      return true;
    }
    boolean critical = worker.critical;
    int s = kind == KIND_TAG_RECV
        ? NativeData.tagRecvRequestTest(critical, handle, info)
        : NativeData.requestCheckStatus(critical, handle);
    if (s == UcpConst.UCS_INPROGRESS) {
      return false;
    }
    release(critical);
    complete(s);
    return true;
  }

  private void release(boolean critical) {
    NativeData.requestFree(critical, handle);
    handle = 0;
    pending = false;
    worker.requestFreed();
  }

  /**
   * Progresses the worker until the operation finishes, then throws if it failed. Busy-polls: meant for
   * latency-bound callers. On timeout the request stays pending (call {@link #cancel()} or wait again).
   *
   * @throws UcxException the operation's failure, or {@link UcxException#TIMED_OUT}
   */
  public void await(long timeout, TimeUnit unit) {
    if (!isDone()) {
      long deadline = System.nanoTime() + unit.toNanos(timeout);
      int spins = 0;
      while (!isDone()) {
        worker.progress();
        // nanoTime costs about as much as an idle progress call: look at the clock now and then
        if ((++spins & 0xff) == 0 && System.nanoTime() - deadline > 0) {
          throw new UcxException("waiting for a request", UcpConst.UCS_ERR_TIMED_OUT);
        }
      }
    }
    check();
  }

  /** Throws the failure of a finished operation; does nothing while pending or after success. */
  public void check() {
    if (status < 0) {
      throw new UcxException("operation failed", status);
    }
  }

  /**
   * Asks libucp to cancel a pending operation (meaningful for receives); the request then finishes
   * with {@code UCS_ERR_CANCELED} once the worker is progressed.
   */
  public void cancel() {
    if (pending) {
      Native.requestCancel(worker.handle(), handle);
    }
  }

  /**
   * Gives a still-pending handle back to libucp without waiting (worker shutdown). A receive is
   * cancelled first so that libucp stops writing into the caller's buffer.
   */
  void abandon() {
    if (pending) {
      if (kind != KIND_OTHER) {
        Native.requestCancel(worker.handle(), handle);
      }
      release(false);
      status = UcpConst.UCS_ERR_CANCELED;
    }
  }

  /** {@code UCS_OK} (0), {@code UCS_INPROGRESS} (1) while pending, or a negative {@code ucs_status_t}. */
  public int status() {
    return status;
  }

  /** Whether a libucp handle is held (the operation did not complete inside its call and is not yet seen done). */
  public boolean isPending() {
    return pending;
  }

  /** Bytes received by a finished tag receive or active-message data receive. */
  public long receivedLength() {
    return receivedLength;
  }

  /** The sender's tag of a finished tag receive. */
  public long senderTag() {
    return senderTag;
  }
}
