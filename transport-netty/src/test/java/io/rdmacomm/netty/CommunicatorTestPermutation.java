package io.rdmacomm.netty;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.testsuite.transport.TestsuitePermutation.BootstrapComboFactory;
import io.netty.testsuite.transport.TestsuitePermutation.BootstrapFactory;
import io.netty.util.concurrent.DefaultThreadFactory;

import java.util.List;

/**
 * The bootstraps Netty's testsuite runs on: one server and one client channel on an event loop group of
 * {@link CommunicatorIoHandler} whose loops map the suite's InetSocketAddresses to {@code tcp://} or {@code rdma://}.
 * The groups live as long as the test JVM (as the suite's own NIO group does); two loops each, for a 2-core machine.
 */
final class CommunicatorTestPermutation {

    private static final int THREADS = 2;
    private static EventLoopGroup tcp;
    private static EventLoopGroup rdma;

    private CommunicatorTestPermutation() {
    }

    static synchronized EventLoopGroup group(String scheme) {
        if (scheme.equals("tcp")) {
            if (tcp == null) {
                tcp = newGroup(scheme);
            }
            return tcp;
        }
        if (scheme.equals("rdma")) {
            if (rdma == null) {
                rdma = newGroup(scheme);
            }
            return rdma;
        }
        throw new IllegalArgumentException(scheme);
    }

    private static EventLoopGroup newGroup(String scheme) {
        return new MultiThreadIoEventLoopGroup(THREADS, new DefaultThreadFactory("testsuite-" + scheme, true),
                CommunicatorIoHandler.newFactory(scheme));
    }

    static List<BootstrapComboFactory<ServerBootstrap, Bootstrap>> socket(String scheme) {
        EventLoopGroup group = group(scheme);
        return List.of(new BootstrapComboFactory<>() {
            @Override
            public ServerBootstrap newServerInstance() {
                return new ServerBootstrap().group(group).channel(CommunicatorServerSocketChannel.class);
            }

            @Override
            public Bootstrap newClientInstance() {
                return new Bootstrap().group(group).channel(CommunicatorSocketChannel.class);
            }
        });
    }

    static List<BootstrapFactory<Bootstrap>> clientSocket(String scheme) {
        EventLoopGroup group = group(scheme);
        return List.of(() -> new Bootstrap().group(group).channel(CommunicatorSocketChannel.class));
    }

    /**
     * The allocators a test runs with: Netty 4.2's default only, not the suite's three (unpooled, pooled, adaptive),
     * to keep the module's tests within CI's time; heap buffers still come from the tests' own random buffer types.
     */
    static List<ByteBufAllocator> allocators() {
        return List.of(ByteBufAllocator.DEFAULT);
    }
}
