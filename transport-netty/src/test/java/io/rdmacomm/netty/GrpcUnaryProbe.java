package io.rdmacomm.netty;

import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerServiceDefinition;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.ServerCalls;
import io.netty.channel.EventLoopGroup;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.SocketAddress;
import java.util.Arrays;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

/**
 * gRPC unary round trips of a small payload, server and client in this JVM, each on its own one-thread event loop
 * group: on the communicator channels ({@code rdma}, {@code tcp}) or on Netty's own TCP transports ({@code epoll},
 * {@code nio}) over loopback, with the same gRPC code, warm-up and samples. The method carries raw bytes (no
 * protobuf), both ends run calls on the transport threads ({@code directExecutor}), the client calls blocking.
 *
 * <pre>bench/grpc-probe --scheme rdma --size 64 --warmup 20000 --iterations 100000</pre>
 *
 * prints one JSON line: p50, p90, p99 and mean of the timed round trips in microseconds.
 */
public final class GrpcUnaryProbe {

    static final MethodDescriptor.Marshaller<byte[]> BYTES = new MethodDescriptor.Marshaller<>() {
        @Override
        public InputStream stream(byte[] value) {
            return new ByteArrayInputStream(value);
        }

        @Override
        public byte[] parse(InputStream stream) {
            try {
                return stream.readAllBytes();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    };

    private static final MethodDescriptor<byte[], byte[]> ECHO = MethodDescriptor.<byte[], byte[]>newBuilder()
            .setType(MethodDescriptor.MethodType.UNARY)
            .setFullMethodName(MethodDescriptor.generateFullMethodName("rdmacomm.probe.Echo", "Unary"))
            .setRequestMarshaller(BYTES)
            .setResponseMarshaller(BYTES)
            .build();

    private GrpcUnaryProbe() {
    }

    public static void main(String[] args) throws Exception {
        String scheme = "rdma";
        int size = 64;
        int warmup = 20_000;
        int iterations = 100_000;
        long busyPollNanos = 0;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--scheme" -> scheme = args[++i];
                case "--size" -> size = Integer.parseInt(args[++i]);
                case "--warmup" -> warmup = Integer.parseInt(args[++i]);
                case "--iterations" -> iterations = Integer.parseInt(args[++i]);
                case "--busy-poll-us" -> busyPollNanos = TimeUnit.MICROSECONDS.toNanos(Long.parseLong(args[++i]));
                default -> {
                    System.err.println("usage: GrpcUnaryProbe [--scheme rdma|tcp|epoll|nio|local] [--size B] [--warmup N]"
                            + " [--iterations N] [--busy-poll-us US (rdma, tcp)]");
                    System.exit(2);
                }
            }
        }
        if (iterations < 1 || warmup < 0 || size < 0) {
            throw new IllegalArgumentException("iterations must be positive, warmup and size not negative");
        }

        ProbeTransport transport = ProbeTransport.of(scheme, busyPollNanos);
        EventLoopGroup serverGroup = transport.group("probe-server");
        EventLoopGroup clientGroup = transport.group("probe-client");
        ServerServiceDefinition service = ServerServiceDefinition.builder("rdmacomm.probe.Echo")
                .addMethod(ECHO, ServerCalls.asyncUnaryCall((request, responses) -> {
                    responses.onNext(request);
                    responses.onCompleted();
                }))
                .build();
        Server server = NettyServerBuilder.forAddress(transport.bind())
                .channelType(transport.serverType())
                .bossEventLoopGroup(serverGroup)
                .workerEventLoopGroup(serverGroup)
                .directExecutor()
                .addService(service)
                .build()
                .start();
        SocketAddress listening = server.getListenSockets().get(0);
        ManagedChannel channel = NettyChannelBuilder.forAddress(transport.target(listening))
                .overrideAuthority(ProbeTransport.authority(listening))
                .channelType(transport.clientType())
                .eventLoopGroup(clientGroup)
                .directExecutor()
                .usePlaintext()
                .build();
        try {
            byte[] payload = new byte[size];
            for (int i = 0; i < warmup; i++) {
                call(channel, payload);
            }
            long[] nanos = new long[iterations];
            for (int i = 0; i < iterations; i++) {
                long start = System.nanoTime();
                call(channel, payload);
                nanos[i] = System.nanoTime() - start;
            }
            Arrays.sort(nanos);
            double mean = Arrays.stream(nanos).average().orElse(0);
            System.out.printf(Locale.ROOT, "{\"test\":\"grpc-unary\",\"scheme\":\"%s\",\"size\":%d,\"warmup\":%d,"
                            + "\"iterations\":%d,\"percentile_samples\":%d,\"busy_poll_us\":%d,\"p50_us\":%.2f,"
                            + "\"p90_us\":%.2f,\"p99_us\":%.2f,\"mean_us\":%.2f,\"jvm\":\"%s\"}%n",
                    scheme, size, warmup, iterations, iterations, TimeUnit.NANOSECONDS.toMicros(busyPollNanos),
                    ProbeTransport.percentile(nanos, 0.50), ProbeTransport.percentile(nanos, 0.90),
                    ProbeTransport.percentile(nanos, 0.99), mean / 1000.0, Runtime.version());
        } finally {
            channel.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
            server.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
            clientGroup.shutdownGracefully(100, 5000, TimeUnit.MILLISECONDS).await(10, TimeUnit.SECONDS);
            serverGroup.shutdownGracefully(100, 5000, TimeUnit.MILLISECONDS).await(10, TimeUnit.SECONDS);
        }
    }

    private static void call(ManagedChannel channel, byte[] payload) {
        byte[] back = ClientCalls.blockingUnaryCall(channel, ECHO, CallOptions.DEFAULT, payload);
        if (back.length != payload.length) {
            throw new IllegalStateException("echo of " + payload.length + " B came back with " + back.length + " B");
        }
    }
}
