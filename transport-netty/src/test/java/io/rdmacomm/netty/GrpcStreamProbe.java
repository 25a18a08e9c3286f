package io.rdmacomm.netty;

import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.ServerCalls;
import io.grpc.stub.StreamObserver;
import io.netty.channel.EventLoopGroup;

import java.net.SocketAddress;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * gRPC bidirectional streaming of small messages, server and client in this JVM, each on its own one-thread event
 * loop group, on the communicator channels ({@code rdma}, {@code tcp}) or on Netty's own TCP transports
 * ({@code epoll}, {@code nio}) over loopback, with the same gRPC code, warm-up and count. One call: the client sends
 * {@code --warmup} + {@code --messages} messages of {@code --size} B (raw bytes, no protobuf) as fast as the call's
 * flow control lets it ({@code isReady}/{@code onReady}), the server echoes each on the same call, and the client
 * counts the echoes: messages/s is the timed messages over the time from the warm-up's last echo to the last echo.
 * Both ends run on the transport threads ({@code directExecutor}).
 *
 * <pre>bench/grpc-probe --probe grpc-stream --scheme rdma --size 64 --warmup 100000 --messages 1000000</pre>
 *
 * prints one JSON line (messages_per_s).
 */
public final class GrpcStreamProbe {

    static final MethodDescriptor<byte[], byte[]> STREAM = MethodDescriptor.<byte[], byte[]>newBuilder()
            .setType(MethodDescriptor.MethodType.BIDI_STREAMING)
            .setFullMethodName(MethodDescriptor.generateFullMethodName("rdmacomm.probe.Echo", "Stream"))
            .setRequestMarshaller(GrpcUnaryProbe.BYTES)
            .setResponseMarshaller(GrpcUnaryProbe.BYTES)
            .build();

    private GrpcStreamProbe() {
    }

    public static void main(String[] args) throws Exception {
        String scheme = "rdma";
        int size = 64;
        long warmup = 100_000;
        long messages = 1_000_000;
        long busyPollNanos = 0;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--scheme" -> scheme = args[++i];
                case "--size" -> size = Integer.parseInt(args[++i]);
                case "--warmup" -> warmup = Long.parseLong(args[++i]);
                case "--messages", "--iterations" -> messages = Long.parseLong(args[++i]);
                case "--busy-poll-us" -> busyPollNanos = TimeUnit.MICROSECONDS.toNanos(Long.parseLong(args[++i]));
                default -> {
                    System.err.println("usage: GrpcStreamProbe [--scheme rdma|tcp|epoll|nio|local] [--size B] [--warmup N]"
                            + " [--messages N] [--busy-poll-us US (rdma, tcp)]");
                    System.exit(2);
                }
            }
        }
        if (messages < 1 || warmup < 0 || size < 0) {
            throw new IllegalArgumentException("messages must be positive, warmup and size not negative");
        }
        ProbeTransport transport = ProbeTransport.of(scheme, busyPollNanos);
        EventLoopGroup serverGroup = transport.group("probe-server");
        EventLoopGroup clientGroup = transport.group("probe-client");
        ServerServiceDefinition service = ServerServiceDefinition.builder("rdmacomm.probe.Echo")
                .addMethod(STREAM, ServerCalls.asyncBidiStreamingCall(responses -> new StreamObserver<byte[]>() {
                    @Override
                    public void onNext(byte[] message) {
                        responses.onNext(message);
                    }

                    @Override
                    public void onError(Throwable t) {
                    }

                    @Override
                    public void onCompleted() {
                        responses.onCompleted();
                    }
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
            Streamer streamer = new Streamer(channel.newCall(STREAM, CallOptions.DEFAULT), new byte[size], warmup,
                    warmup + messages);
            // on the client's loop thread, where the call's callbacks run (directExecutor): a ClientCall is not
            // thread-safe
            clientGroup.next().execute(streamer::run);
            long nanos = streamer.done.get(10, TimeUnit.MINUTES);
            double seconds = nanos / 1e9;
            System.out.printf(Locale.ROOT, "{\"test\":\"grpc-stream\",\"scheme\":\"%s\",\"size\":%d,\"warmup\":%d,"
                            + "\"messages\":%d,\"busy_poll_us\":%d,\"seconds\":%.4f,\"messages_per_s\":%.1f,"
                            + "\"jvm\":\"%s\"}%n",
                    scheme, size, warmup, messages, TimeUnit.NANOSECONDS.toMicros(busyPollNanos), seconds,
                    messages / seconds, Runtime.version());
        } finally {
            channel.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
            server.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
            clientGroup.shutdownGracefully(100, 5000, TimeUnit.MILLISECONDS).await(10, TimeUnit.SECONDS);
            serverGroup.shutdownGracefully(100, 5000, TimeUnit.MILLISECONDS).await(10, TimeUnit.SECONDS);
        }
    }

    /**
     * The client's side of the call: sends while the call is ready, counts the echoes; completes with the nanoseconds
     * from the warm-up's last echo (or the start, without warm-up) to the last echo. Its callbacks run on the
     * client's loop thread (directExecutor), one at a time.
     */
    private static final class Streamer extends ClientCall.Listener<byte[]> {
        private final ClientCall<byte[], byte[]> call;
        private final byte[] payload;
        private final long warmup;
        private final long total;
        private final CompletableFuture<Long> done = new CompletableFuture<>();
        private long sent;
        private long received;
        private long start;

        Streamer(ClientCall<byte[], byte[]> call, byte[] payload, long warmup, long total) {
            this.call = call;
            this.payload = payload;
            this.warmup = warmup;
            this.total = total;
        }

        void run() {
            start = System.nanoTime();
            call.start(this, new Metadata());
            call.request(Integer.MAX_VALUE);
        }

        @Override
        public void onReady() {
            while (sent < total && call.isReady()) {
                call.sendMessage(payload);
                sent++;
            }
            if (sent == total) {
                sent++;
                call.halfClose();
            }
        }

        @Override
        public void onMessage(byte[] message) {
            if (message.length != payload.length) {
                done.completeExceptionally(new IllegalStateException("echo of " + payload.length + " B came back with "
                        + message.length + " B"));
                return;
            }
            received++;
            if (received == warmup) {
                start = System.nanoTime();
            }
            if (received == total) {
                done.complete(System.nanoTime() - start);
            }
        }

        @Override
        public void onClose(Status status, Metadata trailers) {
            if (!done.isDone()) {
                done.completeExceptionally(new IllegalStateException("the call closed after " + received
                        + " echoes: " + status));
            }
        }
    }
}
