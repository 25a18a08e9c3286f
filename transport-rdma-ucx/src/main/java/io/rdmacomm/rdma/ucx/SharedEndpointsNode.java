package io.rdmacomm.rdma.ucx;

import io.rdmacomm.rdma.spi.RdmaNode;
import java.util.function.BooleanSupplier;

/**
 * A UCX node whose channels share one endpoint per peer process ({@link SharedEndpoints}): it counts its peers. Its
 * {@link UcxProgress progress thread}'s place may be taken by an application thread that busy-polls or waits in the
 * worker ({@link #waitAndPoll}).
 */
public interface SharedEndpointsNode extends RdmaNode {

    /**
     * {@code -Dio.rdmacomm.ucx.blockingPoll=false}: no application thread sleeps in a worker's wait
     * ({@code Communicator.canBlockingPoll()} is false): event loops park and the progress thread wakes them (to
     * compare).
     */
    boolean APPLICATION_WAITS = !"false".equals(System.getProperty("io.rdmacomm.ucx.blockingPoll"));

    /** The node's endpoints, one per peer node address. */
    SharedEndpoints<?, ?> endpoints();

    /** The node's progress thread. */
    UcxProgress progressThread();

    @Override
    default int peers() {
        return endpoints().peers();
    }

    @Override
    default boolean reaches(byte[] peerAddress) {
        return endpoints().has(peerAddress);
    }

    /** An application thread stopped polling: the progress thread takes over now rather than after its grace. */
    @Override
    default void pollingEnded() {
        progressThread().pollingEnded();
    }

    @Override
    default boolean canWait() {
        return APPLICATION_WAITS;
    }

    @Override
    default boolean waitAndPoll(long nanos, BooleanSupplier until) {
        return progressThread().waitFromApplication(nanos, until);
    }

    @Override
    default void wakeWaiter() {
        progressThread().wakeIfSleeping();
    }
}
