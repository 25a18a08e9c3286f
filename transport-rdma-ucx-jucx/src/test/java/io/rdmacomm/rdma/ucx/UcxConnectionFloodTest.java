package io.rdmacomm.rdma.ucx;

import io.rdmacomm.testkit.ConnectionFloodContractTest;

/** {@link ConnectionFloodContractTest} for rdma:// on ucx-jucx over UCX's default transports. */
class UcxConnectionFloodTest extends ConnectionFloodContractTest {
    UcxConnectionFloodTest() {
        super("rdma://127.0.0.1:0?provider=ucx-jucx");
    }
}
