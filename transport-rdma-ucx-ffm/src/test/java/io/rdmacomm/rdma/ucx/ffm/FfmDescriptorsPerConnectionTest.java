package io.rdmacomm.rdma.ucx.ffm;

import io.rdmacomm.testkit.DescriptorsPerConnectionContractTest;

/** {@link DescriptorsPerConnectionContractTest} for rdma:// on ucx-ffm over UCX's default transports. */
class FfmDescriptorsPerConnectionTest extends DescriptorsPerConnectionContractTest {
    FfmDescriptorsPerConnectionTest() {
        super("rdma://127.0.0.1:0?provider=ucx-ffm");
    }
}
