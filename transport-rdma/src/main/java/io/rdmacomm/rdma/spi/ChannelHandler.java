package io.rdmacomm.rdma.spi;

import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * Events of one {@link RdmaChannel}, delivered by the provider's progress (its own thread, or a thread calling
 * {@link RdmaNode#poll()}). Implementations must not block and must not call into the channel while holding a
 * lock that a caller of the channel may hold.
 */
public interface ChannelHandler {

    /**
     * A control message arrived: one sent with {@link RdmaChannel#send}, or the notification of a
     * {@link RdmaChannel#write}, which is delivered only after that write's data is placed. {@code message} is
     * valid only during the call.
     */
    void onMessage(ByteBuffer message);

    /** The connection failed (peer gone, transport error); no further events follow. */
    void onError(IOException cause);
}
