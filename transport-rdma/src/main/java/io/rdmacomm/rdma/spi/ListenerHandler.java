package io.rdmacomm.rdma.spi;

/** Receives connection requests of an {@link RdmaListener}; called from the provider's progress thread. */
@FunctionalInterface
public interface ListenerHandler {

    /**
     * A peer connected. Return the handler for the new channel's events; the channel is passed so the engine can
     * keep it. Must not block.
     */
    ChannelHandler onConnection(RdmaChannel channel);
}
