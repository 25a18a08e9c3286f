package io.rdmacomm.netty;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.socket.ChannelInputShutdownEvent;
import io.netty.channel.socket.SocketChannel;
import io.netty.util.CharsetUtil;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** What Netty's testsuite does not cover: endpoint URIs as addresses, no half-close, many channels on one loop. */
@Timeout(60)
class CommunicatorChannelTest {

    /** Echoes what it reads. */
    @ChannelHandler.Sharable
    private static final class Echo extends ChannelInboundHandlerAdapter {
        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ctx.writeAndFlush(msg);
        }
    }

    /** Collects what it reads as text until {@code expected} characters arrived. */
    private static final class Collect extends ChannelInboundHandlerAdapter {
        final StringBuilder text = new StringBuilder();
        final CompletableFuture<String> done = new CompletableFuture<>();
        final int expected;

        Collect(int expected) {
            this.expected = expected;
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ByteBuf buf = (ByteBuf) msg;
            text.append(buf.toString(CharsetUtil.UTF_8));
            buf.release();
            if (text.length() >= expected) {
                done.complete(text.toString());
            }
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            done.completeExceptionally(cause);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"tcp", "rdma"})
    void anEndpointUriIsTheAddressAndHalfCloseFailsCleanly(String scheme) throws Exception {
        EventLoopGroup group = CommunicatorTestPermutation.group(scheme);
        Channel server = new ServerBootstrap().group(group).channel(CommunicatorServerSocketChannel.class)
                .childHandler(new Echo())
                .bind(new CommunicatorAddress(scheme + "://127.0.0.1:0")).sync().channel();
        try {
            CommunicatorAddress bound = ((CommunicatorServerSocketChannel) server).endpointAddress();
            assertTrue(bound.uri().startsWith(scheme + "://127.0.0.1:"), bound.uri());
            assertTrue(((CommunicatorServerSocketChannel) server).localAddress().getPort() > 0);
            Collect collect = new Collect(5);
            // a loop whose default scheme is the other one: the URI's scheme wins
            Channel client = new Bootstrap().group(group).channel(CommunicatorSocketChannel.class).handler(collect)
                    .connect(bound).sync().channel();
            try {
                client.writeAndFlush(Unpooled.copiedBuffer("hello", CharsetUtil.UTF_8)).sync();
                assertEquals("hello", collect.done.get(20, TimeUnit.SECONDS));
                assertEquals(scheme, ((CommunicatorSocketChannel) client).communicator().endpoint().scheme());
                assertFalse(((SocketChannel) client).isOutputShutdown());
                ChannelFuture shutdown = ((SocketChannel) client).shutdownOutput();
                assertInstanceOf(UnsupportedOperationException.class, shutdown.await().cause());
                assertTrue(shutdown.cause().getMessage().contains("no half-close"), shutdown.cause().getMessage());
                assertTrue(client.isActive(), "a refused shutdownOutput leaves the channel as it was");
            } finally {
                client.close().sync();
            }
        } finally {
            server.close().sync();
        }
    }

    @Test
    void allowHalfClosureTurnsThePeersCloseIntoAnInputShutdownEvent() throws Exception {
        EventLoopGroup group = CommunicatorTestPermutation.group("tcp");
        CompletableFuture<Boolean> openAfterEvent = new CompletableFuture<>();
        Channel server = new ServerBootstrap().group(group).channel(CommunicatorServerSocketChannel.class)
                .childOption(ChannelOption.ALLOW_HALF_CLOSURE, true)
                .childHandler(new ChannelInboundHandlerAdapter() {
                    @Override
                    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
                        if (evt == ChannelInputShutdownEvent.INSTANCE) {
                            openAfterEvent.complete(ctx.channel().isOpen()
                                    && ((SocketChannel) ctx.channel()).isInputShutdown());
                            ctx.close();
                        }
                    }
                })
                .bind(new CommunicatorAddress("tcp://127.0.0.1:0")).sync().channel();
        try {
            Channel client = new Bootstrap().group(group).channel(CommunicatorSocketChannel.class)
                    .handler(new ChannelInboundHandlerAdapter())
                    .connect(((CommunicatorServerSocketChannel) server).endpointAddress()).sync().channel();
            client.close().sync();
            assertTrue(openAfterEvent.get(20, TimeUnit.SECONDS));
        } finally {
            server.close().sync();
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"tcp", "rdma"})
    void oneLoopServesManyConnections(String scheme) throws Exception {
        // one thread for the server, its children and every client; rdma:// also spins before it parks
        EventLoopGroup one = new MultiThreadIoEventLoopGroup(1,
                CommunicatorIoHandler.newFactory(scheme, scheme.equals("rdma") ? 20_000 : 0));
        try {
            Channel server = new ServerBootstrap().group(one).channel(CommunicatorServerSocketChannel.class)
                    .childHandler(new Echo())
                    .bind(new java.net.InetSocketAddress("127.0.0.1", 0)).sync().channel();
            List<Channel> clients = new ArrayList<>();
            List<Collect> collects = new ArrayList<>();
            BlockingQueue<Throwable> failures = new LinkedBlockingQueue<>();
            for (int i = 0; i < 8; i++) {
                Collect c = new Collect(6 * 100);
                collects.add(c);
                clients.add(new Bootstrap().group(one).channel(CommunicatorSocketChannel.class).handler(c)
                        .connect(server.localAddress()).sync().channel());
            }
            for (int round = 0; round < 100; round++) {
                for (int i = 0; i < clients.size(); i++) {
                    clients.get(i).writeAndFlush(Unpooled.copiedBuffer(String.format("%06d", round), CharsetUtil.UTF_8))
                            .addListener(f -> {
                                if (!f.isSuccess()) {
                                    failures.add(f.cause());
                                }
                            });
                }
            }
            StringBuilder expected = new StringBuilder();
            for (int round = 0; round < 100; round++) {
                expected.append(String.format("%06d", round));
            }
            for (Collect c : collects) {
                try {
                    c.done.get(30, TimeUnit.SECONDS);
                } catch (java.util.concurrent.TimeoutException e) {
                    // show what did arrive
                }
                synchronized (c) {
                    assertEquals(expected.toString(), c.text.toString());
                }
            }
            assertEquals(List.of(), new ArrayList<>(failures));
            for (Channel c : clients) {
                c.close().sync();
            }
            server.close().sync();
        } finally {
            one.shutdownGracefully(0, 5, TimeUnit.SECONDS).sync();
        }
    }
}
