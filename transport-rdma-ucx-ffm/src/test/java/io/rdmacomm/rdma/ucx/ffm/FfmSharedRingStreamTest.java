package io.rdmacomm.rdma.ucx.ffm;

/** On UCX's shared memory the peer's ring is mapped and written with plain copies. */
class FfmSharedRingStreamTest extends SharedRingStreamCase {
    @Override
    boolean mapped() {
        return true;
    }

    @Override
    boolean inItsEnvironment() {
        return !"tcp".equals(System.getenv("UCX_TLS"));
    }
}
