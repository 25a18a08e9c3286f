package io.rdmacomm.rdma.ucx.jucx;

import io.rdmacomm.testkit.DescriptorsPerConnectionContractTest;

/** {@link DescriptorsPerConnectionContractTest} for rdma:// on ucx-jucx over UCX's default transports. */
class JucxDescriptorsPerConnectionTest extends DescriptorsPerConnectionContractTest {
    JucxDescriptorsPerConnectionTest() {
        super("rdma://127.0.0.1:0?provider=ucx-jucx");
    }
}
