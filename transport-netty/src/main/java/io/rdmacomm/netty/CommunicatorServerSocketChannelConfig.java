package io.rdmacomm.netty;

import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.ChannelOption;
import io.netty.channel.DefaultChannelConfig;
import io.netty.channel.MessageSizeEstimator;
import io.netty.channel.RecvByteBufAllocator;
import io.netty.channel.ServerChannelRecvByteBufAllocator;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.socket.ServerSocketChannelConfig;

import java.util.Map;

/**
 * The configuration of a {@link CommunicatorServerSocketChannel}: auto-read (accepting), the scheme and endpoint
 * options of a bind to an {@link java.net.InetSocketAddress}. SO_BACKLOG, SO_REUSEADDR and SO_RCVBUF are accepted and
 * reported back but change nothing; the transports' own are endpoint options ({@code backlog}).
 */
public final class CommunicatorServerSocketChannelConfig extends DefaultChannelConfig
        implements ServerSocketChannelConfig {

    private volatile String scheme;
    private volatile String endpointOptions = "";
    private volatile int backlog = 4096;
    private volatile boolean reuseAddress = true;
    private volatile int receiveBufferSize = 64 * 1024;

    CommunicatorServerSocketChannelConfig(CommunicatorServerSocketChannel channel) {
        super(channel, new ServerChannelRecvByteBufAllocator());
    }

    public String getScheme() {
        return scheme;
    }

    public CommunicatorServerSocketChannelConfig setScheme(String scheme) {
        this.scheme = scheme;
        return this;
    }

    public String getEndpointOptions() {
        return endpointOptions;
    }

    public CommunicatorServerSocketChannelConfig setEndpointOptions(String endpointOptions) {
        this.endpointOptions = endpointOptions == null ? "" : endpointOptions;
        return this;
    }

    @Override
    public Map<ChannelOption<?>, Object> getOptions() {
        return getOptions(super.getOptions(), CommunicatorChannelOption.SCHEME,
                CommunicatorChannelOption.ENDPOINT_OPTIONS, ChannelOption.SO_BACKLOG, ChannelOption.SO_REUSEADDR,
                ChannelOption.SO_RCVBUF);
    }

    @SuppressWarnings("unchecked")
    @Override
    public <T> T getOption(ChannelOption<T> option) {
        if (option == CommunicatorChannelOption.SCHEME) {
            return (T) scheme;
        } else if (option == CommunicatorChannelOption.ENDPOINT_OPTIONS) {
            return (T) endpointOptions;
        } else if (option == ChannelOption.SO_BACKLOG) {
            return (T) Integer.valueOf(backlog);
        } else if (option == ChannelOption.SO_REUSEADDR) {
            return (T) Boolean.valueOf(reuseAddress);
        } else if (option == ChannelOption.SO_RCVBUF) {
            return (T) Integer.valueOf(receiveBufferSize);
        }
        return super.getOption(option);
    }

    @Override
    public <T> boolean setOption(ChannelOption<T> option, T value) {
        validate(option, value);
        if (option == CommunicatorChannelOption.SCHEME) {
            setScheme((String) value);
        } else if (option == CommunicatorChannelOption.ENDPOINT_OPTIONS) {
            setEndpointOptions((String) value);
        } else if (option == ChannelOption.SO_BACKLOG) {
            setBacklog((Integer) value);
        } else if (option == ChannelOption.SO_REUSEADDR) {
            setReuseAddress((Boolean) value);
        } else if (option == ChannelOption.SO_RCVBUF) {
            setReceiveBufferSize((Integer) value);
        } else {
            return super.setOption(option, value);
        }
        return true;
    }

    @Override
    public int getBacklog() {
        return backlog;
    }

    @Override
    public CommunicatorServerSocketChannelConfig setBacklog(int backlog) {
        this.backlog = backlog;
        return this;
    }

    @Override
    public boolean isReuseAddress() {
        return reuseAddress;
    }

    @Override
    public CommunicatorServerSocketChannelConfig setReuseAddress(boolean reuseAddress) {
        this.reuseAddress = reuseAddress;
        return this;
    }

    @Override
    public int getReceiveBufferSize() {
        return receiveBufferSize;
    }

    @Override
    public CommunicatorServerSocketChannelConfig setReceiveBufferSize(int receiveBufferSize) {
        this.receiveBufferSize = receiveBufferSize;
        return this;
    }

    @Override
    public CommunicatorServerSocketChannelConfig setPerformancePreferences(int connectionTime, int latency,
            int bandwidth) {
        return this;
    }

    @Override
    public CommunicatorServerSocketChannelConfig setConnectTimeoutMillis(int connectTimeoutMillis) {
        super.setConnectTimeoutMillis(connectTimeoutMillis);
        return this;
    }

    @Override
    @Deprecated
    public CommunicatorServerSocketChannelConfig setMaxMessagesPerRead(int maxMessagesPerRead) {
        super.setMaxMessagesPerRead(maxMessagesPerRead);
        return this;
    }

    @Override
    public CommunicatorServerSocketChannelConfig setWriteSpinCount(int writeSpinCount) {
        super.setWriteSpinCount(writeSpinCount);
        return this;
    }

    @Override
    public CommunicatorServerSocketChannelConfig setAllocator(ByteBufAllocator allocator) {
        super.setAllocator(allocator);
        return this;
    }

    @Override
    public CommunicatorServerSocketChannelConfig setRecvByteBufAllocator(RecvByteBufAllocator allocator) {
        super.setRecvByteBufAllocator(allocator);
        return this;
    }

    @Override
    public CommunicatorServerSocketChannelConfig setAutoRead(boolean autoRead) {
        super.setAutoRead(autoRead);
        return this;
    }

    @Override
    public CommunicatorServerSocketChannelConfig setAutoClose(boolean autoClose) {
        super.setAutoClose(autoClose);
        return this;
    }

    @Override
    public CommunicatorServerSocketChannelConfig setMessageSizeEstimator(MessageSizeEstimator estimator) {
        super.setMessageSizeEstimator(estimator);
        return this;
    }

    @Override
    public CommunicatorServerSocketChannelConfig setWriteBufferWaterMark(WriteBufferWaterMark writeBufferWaterMark) {
        super.setWriteBufferWaterMark(writeBufferWaterMark);
        return this;
    }

    @Override
    @Deprecated
    public CommunicatorServerSocketChannelConfig setWriteBufferHighWaterMark(int writeBufferHighWaterMark) {
        super.setWriteBufferHighWaterMark(writeBufferHighWaterMark);
        return this;
    }

    @Override
    @Deprecated
    public CommunicatorServerSocketChannelConfig setWriteBufferLowWaterMark(int writeBufferLowWaterMark) {
        super.setWriteBufferLowWaterMark(writeBufferLowWaterMark);
        return this;
    }
}
