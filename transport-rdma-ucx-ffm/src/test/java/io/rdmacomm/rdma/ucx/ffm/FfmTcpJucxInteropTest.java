package io.rdmacomm.rdma.ucx.ffm;

/**
 * {@link FfmJucxInteropTest} with {@code UCX_TLS=tcp} in both JVMs (the child inherits it): writes travel as
 * active messages ({@code AM_WRITE}) instead of put + flush.
 */
class FfmTcpJucxInteropTest extends FfmJucxInteropTest {
}
