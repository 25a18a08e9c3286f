package io.rdmacomm.rdma.verbs;

import io.rdmacomm.testkit.RemoteMemoryContractTest;
import org.junit.jupiter.api.extension.ExtendWith;

@ExtendWith(VerbsRunsHere.class)
class VerbsRemoteMemoryContractTest extends RemoteMemoryContractTest {
    VerbsRemoteMemoryContractTest() {
        super(VerbsTestHooks.transport());
    }
}
