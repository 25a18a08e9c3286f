package io.rdmacomm.kvstore;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.DisabledForJreRange;
import org.junit.jupiter.api.condition.JRE;

/** On rdma:// with UCX's default transports (shared memory between processes on this host). */
class KvRdmaProcessTest extends KvProcessTest {
    KvRdmaProcessTest() {
        super("rdma://127.0.0.1:0");
    }

    /**
     * Below JDK 22 rdma:// runs on the JUCX provider, where kill -9 of a client mid-transfer can leave the server's
     * UCX worker wedged for its other clients (a known defect of the JUCX path, reproduced here intermittently; the
     * bootstrap-socket rework on branch rdma-v2 targets it). The same test runs on the FFM provider on JDK 22+.
     */
    @Test
    @Override
    @DisabledForJreRange(max = JRE.JAVA_21, disabledReason = "JUCX provider: kill -9 of a client mid-transfer can"
            + " wedge the server's UCX worker (known defect, open in the hostile-networks work)")
    void aClientKilledMidOperationLeavesTheOthersServedAndLeaksNothing() throws Exception {
        super.aClientKilledMidOperationLeavesTheOthersServedAndLeaksNothing();
    }
}
