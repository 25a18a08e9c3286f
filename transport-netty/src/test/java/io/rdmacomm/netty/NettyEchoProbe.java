package io.rdmacomm.netty;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.Promise;

import java.util.Arrays;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

/**
 * Raw Netty, no codec: a {@code ServerBootstrap} and a {@code Bootstrap} in this JVM, each on its own one-thread event
 * loop group, on the communicator channels ({@code rdma}, {@code tcp}) or on Netty's own TCP transports
 * ({@code epoll}, {@code nio}) over loopback, the same handlers, warm-up and samples on every one. Two tests:
 * <ul>
 * <li>{@code --test latency}: 64 B (--size) ping-pong; the server echoes what it reads, the client's handler sends
 * the next message when the whole echo is back and times each round trip on its loop thread (no other thread in
 * the loop); p50/p90/p99/mean over the timed round trips after the untimed warm-up;</li>
 * <li>{@code --test bandwidth}: the client writes 1 MiB (--size) direct buffers as fast as the channel stays
 * writable (water marks 8/16 MiB on every transport), the server reads and drops them; GB/s (10^9 B) over
 * {@code --total-mib} counted by the server after {@code --warmup-mib} untimed.</li>
 * </ul>
 *
 * <pre>bench/grpc-probe --probe netty-echo --scheme rdma --test latency --warmup 20000 --iterations 100000
 * bench/grpc-probe --probe netty-echo --scheme epoll --test bandwidth --warmup-mib 400 --total-mib 4096</pre>
 *
 * prints one JSON line.
 */
public final class NettyEchoProbe {

    private NettyEchoProbe() {
    }

    public static void main(String[] args) throws Exception {
        String scheme = "rdma";
        String test = "latency";
        Integer size = null;
        int warmup = 20_000;
        int iterations = 100_000;
        long warmupMib = 400;
        long totalMib = 4096;
        long busyPollNanos = 0;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--scheme" -> scheme = args[++i];
                case "--test" -> test = args[++i];
                case "--size" -> size = Integer.parseInt(args[++i]);
                case "--warmup" -> warmup = Integer.parseInt(args[++i]);
                case "--iterations" -> iterations = Integer.parseInt(args[++i]);
                case "--warmup-mib" -> warmupMib = Long.parseLong(args[++i]);
                case "--total-mib" -> totalMib = Long.parseLong(args[++i]);
                case "--busy-poll-us" -> busyPollNanos = TimeUnit.MICROSECONDS.toNanos(Long.parseLong(args[++i]));
                default -> {
                    System.err.println("usage: NettyEchoProbe [--scheme rdma|tcp|epoll|nio|local] [--test latency|bandwidth]"
                            + " [--size B (latency 64, bandwidth 1048576)] [--warmup N] [--iterations N] (latency)"
                            + " [--warmup-mib N] [--total-mib N] (bandwidth) [--busy-poll-us US (rdma, tcp)]");
                    System.exit(2);
                }
            }
        }
        ProbeTransport transport = ProbeTransport.of(scheme, busyPollNanos);
        switch (test) {
            case "latency" -> latency(transport, size == null ? 64 : size, warmup, iterations, busyPollNanos);
            case "bandwidth" -> bandwidth(transport, size == null ? 1 << 20 : size, warmupMib << 20, totalMib << 20,
                    busyPollNanos);
            default -> throw new IllegalArgumentException("test must be latency or bandwidth: " + test);
        }
    }

    private static void latency(ProbeTransport transport, int size, int warmup, int iterations, long busyPollNanos)
            throws Exception {
        if (iterations < 1 || warmup < 0 || size < 1) {
            throw new IllegalArgumentException("iterations and size must be positive, warmup not negative");
        }
        EventLoopGroup serverGroup = transport.group("probe-server");
        EventLoopGroup clientGroup = transport.group("probe-client");
        try {
            Channel server = server(transport, serverGroup, new Echo());
            Promise<long[]> done = clientGroup.next().newPromise();
            PingPong pingPong = new PingPong(size, warmup, iterations, done);
            Channel client = client(transport, clientGroup, server, pingPong);
            long[] nanos = done.get(10, TimeUnit.MINUTES);
            client.close().sync();
            server.close().sync();
            Arrays.sort(nanos);
            double mean = Arrays.stream(nanos).average().orElse(0);
            System.out.printf(Locale.ROOT, "{\"test\":\"netty-echo\",\"scheme\":\"%s\",\"size\":%d,\"warmup\":%d,"
                            + "\"iterations\":%d,\"percentile_samples\":%d,\"busy_poll_us\":%d,\"p50_us\":%.2f,"
                            + "\"p90_us\":%.2f,\"p99_us\":%.2f,\"mean_us\":%.2f,\"jvm\":\"%s\"}%n",
                    transport.scheme(), size, warmup, iterations, iterations,
                    TimeUnit.NANOSECONDS.toMicros(busyPollNanos), ProbeTransport.percentile(nanos, 0.50),
                    ProbeTransport.percentile(nanos, 0.90), ProbeTransport.percentile(nanos, 0.99), mean / 1000.0,
                    Runtime.version());
        } finally {
            shutdown(clientGroup, serverGroup);
        }
    }

    private static void bandwidth(ProbeTransport transport, int size, long warmupBytes, long totalBytes,
                                  long busyPollNanos) throws Exception {
        if (totalBytes < 1 || warmupBytes < 0 || size < 1) {
            throw new IllegalArgumentException("total and size must be positive, warm-up not negative");
        }
        EventLoopGroup serverGroup = transport.group("probe-server");
        EventLoopGroup clientGroup = transport.group("probe-client");
        try {
            Promise<Long> done = serverGroup.next().newPromise();
            Sink sink = new Sink(warmupBytes, warmupBytes + totalBytes, done);
            Channel server = server(transport, serverGroup, sink);
            long buffers = (warmupBytes + totalBytes + size - 1) / size;
            Channel client = client(transport, clientGroup, server, new Source(size, buffers));
            long nanos = done.get(10, TimeUnit.MINUTES);
            long timed = sink.received - sink.timedFrom;
            client.close().sync();
            server.close().sync();
            double seconds = nanos / 1e9;
            System.out.printf(Locale.ROOT, "{\"test\":\"netty-bandwidth\",\"scheme\":\"%s\",\"size\":%d,"
                            + "\"warmup_bytes\":%d,\"total_bytes\":%d,\"seconds\":%.4f,\"gb_per_s\":%.4f,"
                            + "\"busy_poll_us\":%d,\"jvm\":\"%s\"}%n",
                    transport.scheme(), size, sink.timedFrom, timed, seconds, timed / 1e9 / seconds,
                    TimeUnit.NANOSECONDS.toMicros(busyPollNanos), Runtime.version());
        } finally {
            shutdown(clientGroup, serverGroup);
        }
    }

    private static Channel server(ProbeTransport transport, EventLoopGroup group, ChannelHandler child)
            throws InterruptedException {
        return new ServerBootstrap().group(group)
                .channel(transport.serverType())
                .childOption(ChannelOption.WRITE_BUFFER_WATER_MARK, new WriteBufferWaterMark(8 << 20, 16 << 20))
                .childHandler(child)
                .bind(transport.bind()).sync().channel();
    }

    private static Channel client(ProbeTransport transport, EventLoopGroup group, Channel server,
                                  ChannelHandler handler) throws InterruptedException {
        return new Bootstrap().group(group)
                .channel(transport.clientType())
                .option(ChannelOption.WRITE_BUFFER_WATER_MARK, new WriteBufferWaterMark(8 << 20, 16 << 20))
                .handler(handler)
                .connect(transport.target(server.localAddress())).sync().channel();
    }

    private static void shutdown(EventLoopGroup... groups) throws InterruptedException {
        for (EventLoopGroup g : groups) {
            g.shutdownGracefully(100, 5000, TimeUnit.MILLISECONDS).await(10, TimeUnit.SECONDS);
        }
    }

    /** The server's end of the ping-pong: writes back what it reads, as it reads it. */
    @ChannelHandler.Sharable
    private static final class Echo extends ChannelInboundHandlerAdapter {
        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ctx.writeAndFlush(msg, ctx.voidPromise());
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            cause.printStackTrace();
            ctx.close();
        }
    }

    /** The client's end: sends a message, and the next one when all of its echo is back; times each on its loop. */
    private static final class PingPong extends ChannelInboundHandlerAdapter {
        private final int size;
        private final int warmup;
        private final long[] nanos;
        private final Promise<long[]> done;
        private ByteBuf message;
        private int pending;
        private int round;
        private long start;

        PingPong(int size, int warmup, int iterations, Promise<long[]> done) {
            this.size = size;
            this.warmup = warmup;
            this.nanos = new long[iterations];
            this.done = done;
        }

        @Override
        public void channelActive(ChannelHandlerContext ctx) {
            message = ctx.alloc().directBuffer(size, size);
            message.writerIndex(size);
            send(ctx);
        }

        private void send(ChannelHandlerContext ctx) {
            pending = size;
            start = System.nanoTime();
            ctx.writeAndFlush(message.retainedDuplicate(), ctx.voidPromise());
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            pending -= ((ByteBuf) msg).readableBytes();
            ReferenceCountUtil.release(msg);
            if (pending > 0) {
                return;
            }
            if (pending < 0) {
                done.tryFailure(new IllegalStateException("more echoed than sent: " + -pending + " B"));
                return;
            }
            long end = System.nanoTime();
            if (round >= warmup) {
                nanos[round - warmup] = end - start;
            }
            round++;
            if (round == warmup + nanos.length) {
                message.release();
                done.trySuccess(nanos);
            } else {
                send(ctx);
            }
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            done.tryFailure(new IllegalStateException("the connection closed after " + round + " round trips"));
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            done.tryFailure(cause);
            ctx.close();
        }
    }

    /** The bandwidth client: writes {@code buffers} views of one direct buffer while the channel stays writable. */
    private static final class Source extends ChannelInboundHandlerAdapter {
        private final int size;
        private final long buffers;
        private ByteBuf block;
        private long written;
        private boolean released;

        Source(int size, long buffers) {
            this.size = size;
            this.buffers = buffers;
        }

        @Override
        public void channelActive(ChannelHandlerContext ctx) {
            block = ctx.alloc().directBuffer(size, size);
            block.writerIndex(size);
            pump(ctx);
        }

        @Override
        public void channelWritabilityChanged(ChannelHandlerContext ctx) {
            pump(ctx);
        }

        private void pump(ChannelHandlerContext ctx) {
            while (written < buffers && ctx.channel().isWritable()) {
                ctx.write(block.retainedDuplicate(), ctx.voidPromise());
                written++;
            }
            ctx.flush();
            if (written == buffers && !released) {
                released = true;
                block.release();
            }
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            cause.printStackTrace();
            ctx.close();
        }
    }

    /** The bandwidth server: drops what it reads; times from the warm-up's end to the total's, on its loop. */
    @ChannelHandler.Sharable
    private static final class Sink extends ChannelInboundHandlerAdapter {
        private final long warmupBytes;
        private final long endBytes;
        private final Promise<Long> done;
        volatile long received;
        volatile long timedFrom;
        private long start;

        Sink(long warmupBytes, long endBytes, Promise<Long> done) {
            this.warmupBytes = warmupBytes;
            this.endBytes = endBytes;
            this.done = done;
        }

        @Override
        public void channelActive(ChannelHandlerContext ctx) {
            if (warmupBytes == 0) {
                start = System.nanoTime();
            }
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            long before = received;
            long now = before + ((ByteBuf) msg).readableBytes();
            ReferenceCountUtil.release(msg);
            received = now;
            if (before < warmupBytes && now >= warmupBytes) {
                start = System.nanoTime();
                timedFrom = now;
            }
            if (before < endBytes && now >= endBytes) {
                done.trySuccess(System.nanoTime() - start);
            }
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            done.tryFailure(new IllegalStateException("the connection closed after " + received + " B"));
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            done.tryFailure(cause);
            ctx.close();
        }
    }
}
