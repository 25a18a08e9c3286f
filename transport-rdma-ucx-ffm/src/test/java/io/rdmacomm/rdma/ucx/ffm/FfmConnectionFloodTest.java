package io.rdmacomm.rdma.ucx.ffm;

import io.rdmacomm.testkit.ConnectionFloodContractTest;

/** {@link ConnectionFloodContractTest} for rdma:// on ucx-ffm over UCX's default transports. */
class FfmConnectionFloodTest extends ConnectionFloodContractTest {
    FfmConnectionFloodTest() {
        super("rdma://127.0.0.1:0?provider=ucx-ffm");
    }
}
