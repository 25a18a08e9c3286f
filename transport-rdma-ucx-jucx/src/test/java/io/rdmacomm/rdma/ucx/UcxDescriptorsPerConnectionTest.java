package io.rdmacomm.rdma.ucx;

import io.rdmacomm.testkit.DescriptorsPerConnectionContractTest;

/** {@link DescriptorsPerConnectionContractTest} for rdma:// on ucx-jucx over UCX's default transports. */
class UcxDescriptorsPerConnectionTest extends DescriptorsPerConnectionContractTest {
    UcxDescriptorsPerConnectionTest() {
        super("rdma://127.0.0.1:0?provider=ucx-jucx");
    }
}
