package io.rdmacomm.netty;

import io.netty.channel.ChannelOption;

/** Channel options of the communicator channels, on top of Netty's own (docs/netty.md lists which apply). */
public final class CommunicatorChannelOption<T> extends ChannelOption<T> {

    /**
     * The scheme ({@code tcp}, {@code rdma}, {@code local}) a bind or connect to a {@link java.net.InetSocketAddress}
     * uses: {@code scheme://host:port}. Unset: the event loop's default ({@link CommunicatorIoHandler#newFactory(String)}).
     * A {@link CommunicatorAddress} names its own scheme and ignores this.
     */
    public static final ChannelOption<String> SCHEME = valueOf(CommunicatorChannelOption.class, "SCHEME");

    /**
     * Endpoint options appended to the URI a bind or connect to an {@link java.net.InetSocketAddress} builds, as a
     * URI's query ({@code readTimeout=30s&ringSize=4m}); empty by default.
     */
    public static final ChannelOption<String> ENDPOINT_OPTIONS =
            valueOf(CommunicatorChannelOption.class, "ENDPOINT_OPTIONS");

    @SuppressWarnings("deprecation")
    private CommunicatorChannelOption() {
        super(null);
    }
}
