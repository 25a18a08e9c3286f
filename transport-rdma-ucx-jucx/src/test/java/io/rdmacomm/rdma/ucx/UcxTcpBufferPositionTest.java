package io.rdmacomm.rdma.ucx;

/**
 * {@link UcxBufferPositionTest} with {@code UCX_TLS=tcp} (surefire execution ucx-tcp), where writes are active
 * messages the target places (rendezvous receives straight into advertised buffers).
 */
class UcxTcpBufferPositionTest extends UcxBufferPositionTest {
}
