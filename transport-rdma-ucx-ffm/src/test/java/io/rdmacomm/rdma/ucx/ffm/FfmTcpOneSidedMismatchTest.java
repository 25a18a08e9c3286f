package io.rdmacomm.rdma.ucx.ffm;

import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;

/** {@link FfmOneSidedMismatchTest} with UCX_TLS=tcp (the surefire execution "ucx-tcp"). */
@EnabledIfEnvironmentVariable(named = "UCX_TLS", matches = "tcp")
class FfmTcpOneSidedMismatchTest extends FfmOneSidedMismatchTest {
}
