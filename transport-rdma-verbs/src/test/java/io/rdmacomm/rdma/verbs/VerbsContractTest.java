package io.rdmacomm.rdma.verbs;

import io.rdmacomm.testkit.CommunicatorContractTest;
import org.junit.jupiter.api.extension.ExtendWith;

@ExtendWith(VerbsRunsHere.class)
class VerbsContractTest extends CommunicatorContractTest {
    VerbsContractTest() {
        super(VerbsTestHooks.transport());
    }
}
