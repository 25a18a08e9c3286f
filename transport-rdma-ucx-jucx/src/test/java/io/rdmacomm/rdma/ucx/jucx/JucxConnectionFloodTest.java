package io.rdmacomm.rdma.ucx.jucx;

import io.rdmacomm.testkit.ConnectionFloodContractTest;

/** {@link ConnectionFloodContractTest} for rdma:// on ucx-jucx over UCX's default transports. */
class JucxConnectionFloodTest extends ConnectionFloodContractTest {
    JucxConnectionFloodTest() {
        super("rdma://127.0.0.1:0?provider=ucx-jucx");
    }
}
