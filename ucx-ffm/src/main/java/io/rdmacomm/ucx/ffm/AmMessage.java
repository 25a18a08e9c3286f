package io.rdmacomm.ucx.ffm;

import java.lang.foreign.MemorySegment;

/**
 * The active message being delivered to an {@link AmHandler}: a flyweight that one handler registration
 * reuses for every message, so delivery allocates nothing. Valid only during
 * {@link AmHandler#onMessage}; one instance is never used by two callbacks at once, because UCX runs a
 * worker's callbacks one at a time even in {@code MULTI} mode.
 *
 * <p>Header and data are reachable as raw addresses and lengths (allocation-free; copy with
 * {@link #copyHeaderTo}/{@link #copyDataTo}), or as segment views ({@link #header()}/{@link #data()}),
 * which allocate a small object each. Neither is aligned (UCX packs the header right after its own
 * bytes): read them with the {@code *_UNALIGNED} value layouts.
 *
 * <p>Large messages arrive by rendezvous ({@link #isRendezvous()}): then {@link #dataAddress()} is a UCX
 * descriptor, not the data, and the data is fetched with {@link #receiveData} (now or, after
 * {@link #keep()}, later through {@link UcpWorker#receiveAmData}).
 */
public final class AmMessage {
  private final UcpWorker worker;
  private final AmHandler handler;
  private long header;
  private long headerLength;
  private long data;
  private long dataLength;
  private long attributes;
  private long replyEndpoint;
  private boolean keep;

  AmMessage(UcpWorker worker, AmHandler handler) {
    this.worker = worker;
    this.handler = handler;
  }

  /** Called by the upcall; returns the {@code ucs_status_t} for UCX. */
  byte dispatch(long headerAddress, long headerSize, long dataAddress, long dataSize, long param) {
    header = headerAddress;
    headerLength = headerSize;
    data = dataAddress;
    dataLength = dataSize;
    attributes = Memory.readLong(param + Structs.AM_RECV_ATTR);
    replyEndpoint = (attributes & UcpConst.UCP_AM_RECV_ATTR_FIELD_REPLY_EP) != 0
        ? Memory.readLong(param + Structs.AM_REPLY_EP) : 0;
    keep = false;
    handler.onMessage(this);
    // UCS_INPROGRESS tells UCX the descriptor is now the application's (to release or receive)
    return (byte) (keep ? UcpConst.UCS_INPROGRESS : UcpConst.UCS_OK);
  }

  /** Address of the user header ({@code header_length} bytes); undefined when the length is 0. */
  public long headerAddress() {
    return header;
  }

  /** Length of the user header in bytes. */
  public long headerLength() {
    return headerLength;
  }

  /** Address of the data, or of the rendezvous descriptor when {@link #isRendezvous()}. */
  public long dataAddress() {
    return data;
  }

  /** Length of the data in bytes (for rendezvous: the size the receive buffer needs). */
  public long dataLength() {
    return dataLength;
  }

  /** Whether the data comes by rendezvous and must be fetched with {@link #receiveData}. */
  public boolean isRendezvous() {
    return (attributes & UcpConst.UCP_AM_RECV_ATTR_FLAG_RNDV) != 0;
  }

  /** Whether the data may outlive the callback if {@link #keep()} is called ({@code UCP_AM_RECV_ATTR_FLAG_DATA}). */
  public boolean isDataPersistent() {
    return (attributes & UcpConst.UCP_AM_RECV_ATTR_FLAG_DATA) != 0;
  }

  /** Whether the sender asked for a reply endpoint ({@code UCP_AM_SEND_FLAG_REPLY}), so {@link #reply} works. */
  public boolean canReply() {
    return replyEndpoint != 0;
  }

  /**
   * The {@code ucp_ep_h} the sender can be answered on (see {@link #canReply()}), or 0: compare it with
   * {@link UcpEndpoint#nativeHandle()} to tell which endpoint of this worker the message came through.
   */
  public long replyEndpointHandle() {
    return replyEndpoint;
  }

  /** A view of the header (allocates the view). */
  public MemorySegment header() {
    return headerLength == 0 ? MemorySegment.NULL : Memory.ALL.asSlice(header, headerLength);
  }

  /** A view of the data (allocates the view); not for rendezvous messages. */
  public MemorySegment data() {
    requireEager();
    return dataLength == 0 ? MemorySegment.NULL : Memory.ALL.asSlice(data, dataLength);
  }

  /** Copies the header into {@code target} at {@code offset}. */
  public void copyHeaderTo(MemorySegment target, long offset) {
    MemorySegment.copy(Memory.ALL, header, target, offset, headerLength);
  }

  /** Copies the data into {@code target} at {@code offset}; not for rendezvous messages. */
  public void copyDataTo(MemorySegment target, long offset) {
    requireEager();
    MemorySegment.copy(Memory.ALL, data, target, offset, dataLength);
  }

  /**
   * Keeps the data (or the rendezvous descriptor) after the handler returns. The application must then
   * pass {@link #dataAddress()} to {@link UcpWorker#releaseAmData} or {@link UcpWorker#receiveAmData}.
   */
  public void keep() {
    if (!isDataPersistent() && !isRendezvous()) {
      throw new IllegalStateException("UCX delivered this data in a transient buffer: copy it instead");
    }
    keep = true;
  }

  /**
   * Starts receiving the data into {@code buffer} ({@code ucp_am_recv_data_nbx}); for a rendezvous message
   * the transfer usually completes later, so poll {@code request} after the handler returns.
   */
  public void receiveData(MemorySegment buffer, UcpRequest request) {
    receiveData(Memory.address(buffer), buffer.byteSize(), request);
  }

  /**
   * {@link #receiveData(MemorySegment, UcpRequest)} into {@code capacity} bytes of native memory at
   * {@code address}.
   */
  public void receiveData(long address, long capacity, UcpRequest request) {
    if (!isDataPersistent() && !isRendezvous()) {
      throw new IllegalStateException("data is not a descriptor: copy it instead");
    }
    if (capacity < dataLength) {
      throw new IllegalArgumentException("buffer of " + capacity + " bytes for " + dataLength);
    }
    worker.receiveAmData(data, address, dataLength, request);
    // UCX owns the descriptor now; returning UCS_INPROGRESS as well matches its documented contract
    keep = true;
  }

  /** Sends an active message back to the sender on its reply endpoint; see {@link UcpEndpoint#amSend}. */
  public void reply(int id, MemorySegment header, MemorySegment data, int flags, UcpRequest request) {
    if (replyEndpoint == 0) {
      throw new IllegalStateException("sender did not set UcpEndpoint.AM_REPLY");
    }
    UcpEndpoint.amSend(worker, replyEndpoint, id, header, data, flags, request);
  }

  private void requireEager() {
    if (isRendezvous()) {
      throw new IllegalStateException("rendezvous message: fetch the data with receiveData");
    }
  }
}
