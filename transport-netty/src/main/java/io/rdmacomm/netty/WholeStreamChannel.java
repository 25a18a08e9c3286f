package io.rdmacomm.netty;

import io.netty.channel.AbstractChannel;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelPromise;
import io.netty.channel.socket.SocketChannel;

/**
 * What a {@link SocketChannel} on a communicator cannot do: half-close. The Communicator contract's close() ends
 * both directions, so shutting down one direction (or both, short of close) fails with an
 * {@link UnsupportedOperationException} saying so and leaves the channel as it was; the input counts as shut down
 * once the peer's stream ended (ALLOW_HALF_CLOSURE) or the channel is inactive. These are {@link SocketChannel}'s
 * methods, which the subclass implements.
 */
abstract class WholeStreamChannel extends AbstractChannel {
    static final String NO_HALF_CLOSE = "the Communicator contract has no half-close: close() ends both directions,"
            + " the peer reads -1 once it read everything";

    WholeStreamChannel(Channel parent) {
        super(parent);
    }

    /** Whether the peer's stream ended while the channel stays open (ALLOW_HALF_CLOSURE). */
    abstract boolean peerStreamEnded();

    @Override
    protected void doShutdownOutput() {
        throw new UnsupportedOperationException(NO_HALF_CLOSE);
    }

    public boolean isInputShutdown() {
        return peerStreamEnded() || !isActive();
    }

    public ChannelFuture shutdownInput() {
        return shutdownInput(newPromise());
    }

    public ChannelFuture shutdownInput(ChannelPromise promise) {
        return promise.setFailure(new UnsupportedOperationException(NO_HALF_CLOSE));
    }

    public boolean isOutputShutdown() {
        return !isActive();
    }

    public ChannelFuture shutdownOutput() {
        return shutdownOutput(newPromise());
    }

    public ChannelFuture shutdownOutput(ChannelPromise promise) {
        return promise.setFailure(new UnsupportedOperationException(NO_HALF_CLOSE));
    }

    public boolean isShutdown() {
        return !isActive();
    }

    public ChannelFuture shutdown() {
        return shutdown(newPromise());
    }

    public ChannelFuture shutdown(ChannelPromise promise) {
        return promise.setFailure(new UnsupportedOperationException(NO_HALF_CLOSE + "; use close()"));
    }
}
