package io.rdmacomm.rdma.ucx.jucx;

import io.rdmacomm.testkit.DescriptorsPerConnectionContractTest;

/** {@link DescriptorsPerConnectionContractTest} for rdma:// on ucx-jucx over UCX_TLS=tcp (this class runs in the ucx-tcp surefire execution). */
class JucxTcpDescriptorsPerConnectionTest extends DescriptorsPerConnectionContractTest {
    JucxTcpDescriptorsPerConnectionTest() {
        super("rdma://127.0.0.1:0?provider=ucx-jucx");
    }
}
