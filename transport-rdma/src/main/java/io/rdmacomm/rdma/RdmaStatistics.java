package io.rdmacomm.rdma;

/**
 * Counters of one {@code rdma://} connection at the moment they were taken, for monitoring and for telling which
 * protocol path the bytes took ({@link RdmaCommunicator#statistics()}).
 *
 * @param registeredBytes memory the connection holds registered: its receive ring, the staging buffer that mirrors
 *     the peer's ring (none where the peer's ring is mapped), the zero-copy registration cache and the regions of
 *     {@code register}; bounded by the endpoint option {@code maxRegistered}, 0 once closed
 * @param zeroCopyBytesWritten bytes this side wrote straight into read buffers the peer advertised (one copy
 *     instead of three; see the endpoint option {@code zeroCopyThreshold})
 * @param peerRingMapped whether this side writes into the peer's receive ring mapped into its own process (shared
 *     memory on one host, ucx-ffm): one copy per byte on each side, and only notifications travel through UCX
 */
public record RdmaStatistics(long registeredBytes, long zeroCopyBytesWritten, boolean peerRingMapped) {
}
