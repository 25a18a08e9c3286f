package io.rdmacomm.rdma.ucx.ffm;

/** With UCX_TLS=tcp no ring is shared: writes stay active messages the owner checks and places. */
class FfmTcpSharedRingStreamTest extends SharedRingStreamCase {
    @Override
    boolean mapped() {
        return false;
    }

    @Override
    boolean inItsEnvironment() {
        return "tcp".equals(System.getenv("UCX_TLS"));
    }
}
