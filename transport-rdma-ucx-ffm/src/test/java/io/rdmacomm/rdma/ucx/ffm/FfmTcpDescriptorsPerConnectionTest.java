package io.rdmacomm.rdma.ucx.ffm;

import io.rdmacomm.testkit.DescriptorsPerConnectionContractTest;

/** {@link DescriptorsPerConnectionContractTest} for rdma:// on ucx-ffm over UCX_TLS=tcp (this class runs in the ucx-tcp surefire execution). */
class FfmTcpDescriptorsPerConnectionTest extends DescriptorsPerConnectionContractTest {
    FfmTcpDescriptorsPerConnectionTest() {
        super("rdma://127.0.0.1:0?provider=ucx-ffm");
    }
}
