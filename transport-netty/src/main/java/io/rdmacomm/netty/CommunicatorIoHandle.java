package io.rdmacomm.netty;

import io.netty.channel.IoHandle;
import io.rdmacomm.api.Communicator;

/** A handle served by {@link CommunicatorIoHandler}: a connection's communicator, or none (a server channel). */
public interface CommunicatorIoHandle extends IoHandle {

    /** The connected communicator whose readiness {@link CommunicatorIoOps#READ} arms, or null if none yet. */
    Communicator communicator();

    /** Closes the handle's channel; never throws. */
    @Override
    void close();
}
