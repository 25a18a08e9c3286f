package io.rdmacomm.netty;

import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.ChannelOption;
import io.netty.channel.DefaultChannelConfig;
import io.netty.channel.MessageSizeEstimator;
import io.netty.channel.RecvByteBufAllocator;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.socket.SocketChannelConfig;

import java.util.Map;

/**
 * The configuration of a {@link CommunicatorSocketChannel}. Netty's generic options apply as on NIO (auto-read,
 * allocator, receive buffer allocator, write buffer water marks, auto-close, connect timeout, allow-half-closure for
 * the input side). The socket options a communicator does not expose (TCP_NODELAY, SO_SNDBUF, SO_RCVBUF, SO_LINGER,
 * SO_KEEPALIVE, IP_TOS, SO_REUSEADDR) are accepted and reported back but change nothing: the transports set their
 * own (tcp:// always runs TCP_NODELAY; buffer sizes are endpoint options such as {@code sendBuffer} and
 * {@code ringSize}, given through {@link CommunicatorChannelOption#ENDPOINT_OPTIONS} or the URI).
 */
public final class CommunicatorSocketChannelConfig extends DefaultChannelConfig implements SocketChannelConfig {

    private volatile String scheme;
    private volatile String endpointOptions = "";
    private volatile boolean allowHalfClosure;
    private volatile boolean tcpNoDelay = true;
    private volatile int soLinger = -1;
    private volatile int sendBufferSize = 64 * 1024;
    private volatile int receiveBufferSize = 64 * 1024;
    private volatile boolean keepAlive;
    private volatile int trafficClass;
    private volatile boolean reuseAddress;

    CommunicatorSocketChannelConfig(CommunicatorSocketChannel channel) {
        super(channel);
    }

    /** The scheme set by {@link CommunicatorChannelOption#SCHEME}, or null. */
    public String getScheme() {
        return scheme;
    }

    public CommunicatorSocketChannelConfig setScheme(String scheme) {
        this.scheme = scheme;
        return this;
    }

    public String getEndpointOptions() {
        return endpointOptions;
    }

    public CommunicatorSocketChannelConfig setEndpointOptions(String endpointOptions) {
        this.endpointOptions = endpointOptions == null ? "" : endpointOptions;
        return this;
    }

    @Override
    public Map<ChannelOption<?>, Object> getOptions() {
        return getOptions(super.getOptions(), CommunicatorChannelOption.SCHEME,
                CommunicatorChannelOption.ENDPOINT_OPTIONS, ChannelOption.ALLOW_HALF_CLOSURE,
                ChannelOption.TCP_NODELAY, ChannelOption.SO_LINGER, ChannelOption.SO_SNDBUF, ChannelOption.SO_RCVBUF,
                ChannelOption.SO_KEEPALIVE, ChannelOption.IP_TOS, ChannelOption.SO_REUSEADDR);
    }

    @SuppressWarnings("unchecked")
    @Override
    public <T> T getOption(ChannelOption<T> option) {
        if (option == CommunicatorChannelOption.SCHEME) {
            return (T) scheme;
        } else if (option == CommunicatorChannelOption.ENDPOINT_OPTIONS) {
            return (T) endpointOptions;
        } else if (option == ChannelOption.ALLOW_HALF_CLOSURE) {
            return (T) Boolean.valueOf(allowHalfClosure);
        } else if (option == ChannelOption.TCP_NODELAY) {
            return (T) Boolean.valueOf(tcpNoDelay);
        } else if (option == ChannelOption.SO_LINGER) {
            return (T) Integer.valueOf(soLinger);
        } else if (option == ChannelOption.SO_SNDBUF) {
            return (T) Integer.valueOf(sendBufferSize);
        } else if (option == ChannelOption.SO_RCVBUF) {
            return (T) Integer.valueOf(receiveBufferSize);
        } else if (option == ChannelOption.SO_KEEPALIVE) {
            return (T) Boolean.valueOf(keepAlive);
        } else if (option == ChannelOption.IP_TOS) {
            return (T) Integer.valueOf(trafficClass);
        } else if (option == ChannelOption.SO_REUSEADDR) {
            return (T) Boolean.valueOf(reuseAddress);
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
        } else if (option == ChannelOption.ALLOW_HALF_CLOSURE) {
            setAllowHalfClosure((Boolean) value);
        } else if (option == ChannelOption.TCP_NODELAY) {
            setTcpNoDelay((Boolean) value);
        } else if (option == ChannelOption.SO_LINGER) {
            setSoLinger((Integer) value);
        } else if (option == ChannelOption.SO_SNDBUF) {
            setSendBufferSize((Integer) value);
        } else if (option == ChannelOption.SO_RCVBUF) {
            setReceiveBufferSize((Integer) value);
        } else if (option == ChannelOption.SO_KEEPALIVE) {
            setKeepAlive((Boolean) value);
        } else if (option == ChannelOption.IP_TOS) {
            setTrafficClass((Integer) value);
        } else if (option == ChannelOption.SO_REUSEADDR) {
            setReuseAddress((Boolean) value);
        } else {
            return super.setOption(option, value);
        }
        return true;
    }

    @Override
    public boolean isTcpNoDelay() {
        return tcpNoDelay;
    }

    @Override
    public CommunicatorSocketChannelConfig setTcpNoDelay(boolean tcpNoDelay) {
        this.tcpNoDelay = tcpNoDelay;
        return this;
    }

    @Override
    public int getSoLinger() {
        return soLinger;
    }

    @Override
    public CommunicatorSocketChannelConfig setSoLinger(int soLinger) {
        this.soLinger = soLinger;
        return this;
    }

    @Override
    public int getSendBufferSize() {
        return sendBufferSize;
    }

    @Override
    public CommunicatorSocketChannelConfig setSendBufferSize(int sendBufferSize) {
        this.sendBufferSize = sendBufferSize;
        return this;
    }

    @Override
    public int getReceiveBufferSize() {
        return receiveBufferSize;
    }

    @Override
    public CommunicatorSocketChannelConfig setReceiveBufferSize(int receiveBufferSize) {
        this.receiveBufferSize = receiveBufferSize;
        return this;
    }

    @Override
    public boolean isKeepAlive() {
        return keepAlive;
    }

    @Override
    public CommunicatorSocketChannelConfig setKeepAlive(boolean keepAlive) {
        this.keepAlive = keepAlive;
        return this;
    }

    @Override
    public int getTrafficClass() {
        return trafficClass;
    }

    @Override
    public CommunicatorSocketChannelConfig setTrafficClass(int trafficClass) {
        this.trafficClass = trafficClass;
        return this;
    }

    @Override
    public boolean isReuseAddress() {
        return reuseAddress;
    }

    @Override
    public CommunicatorSocketChannelConfig setReuseAddress(boolean reuseAddress) {
        this.reuseAddress = reuseAddress;
        return this;
    }

    @Override
    public CommunicatorSocketChannelConfig setPerformancePreferences(int connectionTime, int latency, int bandwidth) {
        return this;
    }

    /**
     * Whether the end of the peer's stream leaves this channel open (a {@code ChannelInputShutdownEvent} is fired)
     * instead of closing it. The communicator contract has no half-close of its own: the peer's stream ends when it
     * closes, so what this side may still write is not read.
     */
    @Override
    public boolean isAllowHalfClosure() {
        return allowHalfClosure;
    }

    @Override
    public CommunicatorSocketChannelConfig setAllowHalfClosure(boolean allowHalfClosure) {
        this.allowHalfClosure = allowHalfClosure;
        return this;
    }

    @Override
    public CommunicatorSocketChannelConfig setConnectTimeoutMillis(int connectTimeoutMillis) {
        super.setConnectTimeoutMillis(connectTimeoutMillis);
        return this;
    }

    @Override
    @Deprecated
    public CommunicatorSocketChannelConfig setMaxMessagesPerRead(int maxMessagesPerRead) {
        super.setMaxMessagesPerRead(maxMessagesPerRead);
        return this;
    }

    @Override
    public CommunicatorSocketChannelConfig setWriteSpinCount(int writeSpinCount) {
        super.setWriteSpinCount(writeSpinCount);
        return this;
    }

    @Override
    public CommunicatorSocketChannelConfig setAllocator(ByteBufAllocator allocator) {
        super.setAllocator(allocator);
        return this;
    }

    @Override
    public CommunicatorSocketChannelConfig setRecvByteBufAllocator(RecvByteBufAllocator allocator) {
        super.setRecvByteBufAllocator(allocator);
        return this;
    }

    @Override
    public CommunicatorSocketChannelConfig setAutoRead(boolean autoRead) {
        super.setAutoRead(autoRead);
        return this;
    }

    @Override
    public CommunicatorSocketChannelConfig setAutoClose(boolean autoClose) {
        super.setAutoClose(autoClose);
        return this;
    }

    @Override
    public CommunicatorSocketChannelConfig setMessageSizeEstimator(MessageSizeEstimator estimator) {
        super.setMessageSizeEstimator(estimator);
        return this;
    }

    @Override
    public CommunicatorSocketChannelConfig setWriteBufferWaterMark(WriteBufferWaterMark writeBufferWaterMark) {
        super.setWriteBufferWaterMark(writeBufferWaterMark);
        return this;
    }

    @Override
    @Deprecated
    public CommunicatorSocketChannelConfig setWriteBufferHighWaterMark(int writeBufferHighWaterMark) {
        super.setWriteBufferHighWaterMark(writeBufferHighWaterMark);
        return this;
    }

    @Override
    @Deprecated
    public CommunicatorSocketChannelConfig setWriteBufferLowWaterMark(int writeBufferLowWaterMark) {
        super.setWriteBufferLowWaterMark(writeBufferLowWaterMark);
        return this;
    }
}
