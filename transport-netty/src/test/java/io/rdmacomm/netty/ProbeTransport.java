package io.rdmacomm.netty;

import io.netty.channel.Channel;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.ServerChannel;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.local.LocalAddress;
import io.netty.channel.local.LocalChannel;
import io.netty.channel.local.LocalIoHandler;
import io.netty.channel.local.LocalServerChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.util.concurrent.DefaultThreadFactory;

import java.net.InetSocketAddress;
import java.net.SocketAddress;

/**
 * The transport a probe runs on: the communicator channels ({@code rdma}, {@code tcp}, on a
 * {@link CommunicatorIoHandler}) or Netty's own TCP transports ({@code epoll}, {@code nio}) over loopback, or Netty's
 * in-JVM {@code local} channels ({@link LocalChannel}: a write hands the buffer to the peer channel's loop, with no
 * socket and no copy, only the loops' wake-ups), about the best a transport between two event loops can do. The probes
 * (GrpcUnaryProbe, GrpcStreamProbe, NettyEchoProbe) run the same code on every one of them.
 */
record ProbeTransport(String scheme, IoHandlerFactory io, Class<? extends ServerChannel> serverType,
                      Class<? extends Channel> clientType, SocketAddress bind) {

    static ProbeTransport of(String scheme, long busyPollNanos) {
        return switch (scheme) {
            case "rdma", "tcp" -> new ProbeTransport(scheme, CommunicatorIoHandler.newFactory(scheme, busyPollNanos),
                    CommunicatorServerSocketChannel.class, CommunicatorSocketChannel.class,
                    new CommunicatorAddress(scheme + "://127.0.0.1:0"));
            case "epoll" -> new ProbeTransport(scheme, EpollIoHandler.newFactory(), EpollServerSocketChannel.class,
                    EpollSocketChannel.class, new InetSocketAddress("127.0.0.1", 0));
            case "nio" -> new ProbeTransport(scheme, NioIoHandler.newFactory(), NioServerSocketChannel.class,
                    NioSocketChannel.class, new InetSocketAddress("127.0.0.1", 0));
            case "local" -> new ProbeTransport(scheme, LocalIoHandler.newFactory(), LocalServerChannel.class,
                    LocalChannel.class, new LocalAddress(LocalAddress.class));
            default -> throw new IllegalArgumentException("scheme must be rdma, tcp, epoll, nio or local: " + scheme);
        };
    }

    /** A one-thread event loop group of this transport, its thread a daemon named {@code name}. */
    EventLoopGroup group(String name) {
        return new MultiThreadIoEventLoopGroup(1, new DefaultThreadFactory(name, true), io);
    }

    /** The address a client connects to for a server of this transport listening on {@code listening}. */
    SocketAddress target(SocketAddress listening) {
        if (listening instanceof LocalAddress) {
            return listening;
        }
        int port = ((InetSocketAddress) listening).getPort();
        return bind instanceof CommunicatorAddress
                ? new CommunicatorAddress(scheme + "://127.0.0.1:" + port)
                : new InetSocketAddress("127.0.0.1", port);
    }

    /** The authority a gRPC client names for a server listening on {@code listening}. */
    static String authority(SocketAddress listening) {
        return listening instanceof InetSocketAddress a ? "127.0.0.1:" + a.getPort() : "localhost";
    }

    /** The value below which the given fraction of the sorted samples (nanoseconds) lie, in microseconds. */
    static double percentile(long[] sorted, double fraction) {
        int index = (int) Math.min(sorted.length - 1, Math.max(0, Math.ceil(fraction * sorted.length) - 1));
        return sorted[index] / 1000.0;
    }
}
