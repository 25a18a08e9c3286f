package io.rdmacomm.rdma.ucx.jucx;

/**
 * {@link JucxBufferPositionTest} with {@code UCX_TLS=tcp} (surefire execution ucx-tcp), where writes are active
 * messages the target places (rendezvous receives straight into advertised buffers).
 */
class JucxTcpBufferPositionTest extends JucxBufferPositionTest {
}
