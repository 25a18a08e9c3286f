package io.rdmacomm.netty;

import com.google.protobuf.ByteString;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.GrpcSslContexts;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.MetadataUtils;
import io.grpc.stub.StreamObserver;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.pkitesting.CertificateBuilder;
import io.netty.pkitesting.X509Bundle;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.rdmacomm.netty.interop.EchoStatus;
import io.rdmacomm.netty.interop.Empty;
import io.rdmacomm.netty.interop.Payload;
import io.rdmacomm.netty.interop.ResponseParameters;
import io.rdmacomm.netty.interop.SimpleRequest;
import io.rdmacomm.netty.interop.SimpleResponse;
import io.rdmacomm.netty.interop.StreamingInputCallRequest;
import io.rdmacomm.netty.interop.StreamingInputCallResponse;
import io.rdmacomm.netty.interop.StreamingOutputCallRequest;
import io.rdmacomm.netty.interop.StreamingOutputCallResponse;
import io.rdmacomm.netty.interop.TestServiceGrpc;
import io.rdmacomm.netty.interop.UnimplementedServiceGrpc;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * gRPC-java (io.grpc:grpc-netty, unshaded) over the Netty channels: a server from {@link NettyServerBuilder} and a
 * client from {@link NettyChannelBuilder} on a {@link CommunicatorIoHandler} group, each on tcp:// and rdma://, run
 * the client cases of gRPC's interop test descriptions against a small TestService written here.
 * One server and one client channel per scheme serve all cases (as an interop client does).
 */
@Timeout(60)
class GrpcInteropTest {

    private static final Metadata.Key<String> ECHO_INITIAL =
            Metadata.Key.of("x-grpc-test-echo-initial", Metadata.ASCII_STRING_MARSHALLER);
    private static final Metadata.Key<byte[]> ECHO_TRAILING =
            Metadata.Key.of("x-grpc-test-echo-trailing-bin", Metadata.BINARY_BYTE_MARSHALLER);
    /** Every call of a case carries this deadline, so that a lost response fails the call, not the whole run. */
    private static final long CALL_DEADLINE_SECONDS = 20;

    /** A server, its client channel and their event loop group for one scheme. */
    private record Stack(EventLoopGroup group, Server server, ManagedChannel channel) {
    }

    private static final Map<String, Stack> STACKS = new HashMap<>();

    private static synchronized Stack stack(String scheme) throws Exception {
        Stack stack = STACKS.get(scheme);
        if (stack == null) {
            EventLoopGroup group = new MultiThreadIoEventLoopGroup(2, new DefaultThreadFactory("grpc-" + scheme, true),
                    CommunicatorIoHandler.newFactory(scheme));
            Server server = NettyServerBuilder.forAddress(new CommunicatorAddress(scheme + "://127.0.0.1:0"))
                    .channelType(CommunicatorServerSocketChannel.class)
                    .bossEventLoopGroup(group)
                    .workerEventLoopGroup(group)
                    .addService(io.grpc.ServerInterceptors.intercept(new InteropService(), new EchoMetadata()))
                    .build()
                    .start();
            int port = ((InetSocketAddress) server.getListenSockets().get(0)).getPort();
            ManagedChannel channel = NettyChannelBuilder
                    .forAddress(new CommunicatorAddress(scheme + "://127.0.0.1:" + port))
                    .overrideAuthority("127.0.0.1:" + port)
                    .channelType(CommunicatorSocketChannel.class)
                    .eventLoopGroup(group)
                    .usePlaintext()
                    .build();
            stack = new Stack(group, server, channel);
            STACKS.put(scheme, stack);
        }
        return stack;
    }

    @AfterAll
    static synchronized void shutDown() throws InterruptedException {
        for (Stack stack : STACKS.values()) {
            stack.channel().shutdownNow();
            stack.server().shutdownNow();
            stack.channel().awaitTermination(10, TimeUnit.SECONDS);
            stack.server().awaitTermination(10, TimeUnit.SECONDS);
            stack.group().shutdownGracefully(200, 5000, TimeUnit.MILLISECONDS).await(10, TimeUnit.SECONDS);
        }
        STACKS.clear();
    }

    private static TestServiceGrpc.TestServiceBlockingStub blocking(String scheme) throws Exception {
        return TestServiceGrpc.newBlockingStub(stack(scheme).channel())
                .withDeadlineAfter(CALL_DEADLINE_SECONDS, TimeUnit.SECONDS);
    }

    private static TestServiceGrpc.TestServiceStub async(String scheme) throws Exception {
        return TestServiceGrpc.newStub(stack(scheme).channel())
                .withDeadlineAfter(CALL_DEADLINE_SECONDS, TimeUnit.SECONDS);
    }

    private static Payload zeros(int size) {
        return Payload.newBuilder().setBody(ByteString.copyFrom(new byte[size])).build();
    }

    private static StreamingOutputCallRequest pingRequest(int responseSize, int payloadSize) {
        return StreamingOutputCallRequest.newBuilder()
                .addResponseParameters(ResponseParameters.newBuilder().setSize(responseSize))
                .setPayload(zeros(payloadSize))
                .build();
    }

    // ---- the interop cases ----

    @ParameterizedTest
    @ValueSource(strings = {"tcp", "rdma"})
    void emptyUnary(String scheme) throws Exception {
        assertEquals(Empty.getDefaultInstance(), blocking(scheme).emptyCall(Empty.getDefaultInstance()));
    }

    @ParameterizedTest
    @ValueSource(strings = {"tcp", "rdma"})
    void largeUnary(String scheme) throws Exception {
        SimpleResponse response = blocking(scheme).unaryCall(
                SimpleRequest.newBuilder().setResponseSize(314159).setPayload(zeros(271828)).build());
        assertEquals(zeros(314159), response.getPayload());
    }

    @ParameterizedTest
    @ValueSource(strings = {"tcp", "rdma"})
    void clientStreaming(String scheme) throws Exception {
        Observer<StreamingInputCallResponse> responses = new Observer<>();
        StreamObserver<StreamingInputCallRequest> requests = async(scheme).streamingInputCall(responses);
        for (int size : new int[] {27182, 8, 1828, 45904}) {
            requests.onNext(StreamingInputCallRequest.newBuilder().setPayload(zeros(size)).build());
        }
        requests.onCompleted();
        assertEquals(Status.Code.OK, responses.awaitStatus().getCode());
        assertEquals(74922, responses.values.get(0).getAggregatedPayloadSize());
    }

    @ParameterizedTest
    @ValueSource(strings = {"tcp", "rdma"})
    void serverStreaming(String scheme) throws Exception {
        int[] sizes = {31415, 9, 2653, 58979};
        StreamingOutputCallRequest.Builder request = StreamingOutputCallRequest.newBuilder();
        for (int size : sizes) {
            request.addResponseParameters(ResponseParameters.newBuilder().setSize(size));
        }
        List<StreamingOutputCallResponse> responses = new ArrayList<>();
        blocking(scheme).streamingOutputCall(request.build()).forEachRemaining(responses::add);
        assertEquals(sizes.length, responses.size());
        for (int i = 0; i < sizes.length; i++) {
            assertEquals(zeros(sizes[i]), responses.get(i).getPayload());
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"tcp", "rdma"})
    void pingPong(String scheme) throws Exception {
        int[] responseSizes = {31415, 9, 2653, 58979};
        int[] payloadSizes = {27182, 8, 1828, 45904};
        Observer<StreamingOutputCallResponse> responses = new Observer<>();
        StreamObserver<StreamingOutputCallRequest> requests = async(scheme).fullDuplexCall(responses);
        for (int i = 0; i < responseSizes.length; i++) {
            requests.onNext(pingRequest(responseSizes[i], payloadSizes[i]));
            StreamingOutputCallResponse response = responses.next();
            assertEquals(zeros(responseSizes[i]), response.getPayload());
        }
        requests.onCompleted();
        assertEquals(Status.Code.OK, responses.awaitStatus().getCode());
        assertEquals(responseSizes.length, responses.values.size());
    }

    @ParameterizedTest
    @ValueSource(strings = {"tcp", "rdma"})
    void emptyStream(String scheme) throws Exception {
        Observer<StreamingOutputCallResponse> responses = new Observer<>();
        async(scheme).fullDuplexCall(responses).onCompleted();
        assertEquals(Status.Code.OK, responses.awaitStatus().getCode());
        assertTrue(responses.values.isEmpty());
    }

    @ParameterizedTest
    @ValueSource(strings = {"tcp", "rdma"})
    void cancelAfterBegin(String scheme) throws Exception {
        Observer<StreamingInputCallResponse> responses = new Observer<>();
        ClientCallStreamObserver<StreamingInputCallRequest> requests =
                (ClientCallStreamObserver<StreamingInputCallRequest>) async(scheme).streamingInputCall(responses);
        requests.cancel("cancel_after_begin", null);
        assertEquals(Status.Code.CANCELLED, responses.awaitStatus().getCode());
    }

    @ParameterizedTest
    @ValueSource(strings = {"tcp", "rdma"})
    void cancelAfterFirstResponse(String scheme) throws Exception {
        Observer<StreamingOutputCallResponse> responses = new Observer<>();
        ClientCallStreamObserver<StreamingOutputCallRequest> requests =
                (ClientCallStreamObserver<StreamingOutputCallRequest>) async(scheme).fullDuplexCall(responses);
        requests.onNext(pingRequest(31415, 27182));
        assertEquals(zeros(31415), responses.next().getPayload());
        requests.cancel("cancel_after_first_response", null);
        assertEquals(Status.Code.CANCELLED, responses.awaitStatus().getCode());
    }

    @ParameterizedTest
    @ValueSource(strings = {"tcp", "rdma"})
    void timeoutOnSleepingServer(String scheme) throws Exception {
        Observer<StreamingOutputCallResponse> responses = new Observer<>();
        StreamObserver<StreamingOutputCallRequest> requests = TestServiceGrpc.newStub(stack(scheme).channel())
                .withDeadlineAfter(1, TimeUnit.MILLISECONDS).fullDuplexCall(responses);
        try {
            requests.onNext(StreamingOutputCallRequest.newBuilder().setPayload(zeros(27182)).build());
        } catch (IllegalStateException alreadyOver) {
            // the call may have ended before the message went out: the descriptions allow that
        }
        assertEquals(Status.Code.DEADLINE_EXCEEDED, responses.awaitStatus().getCode());
    }

    @ParameterizedTest
    @ValueSource(strings = {"tcp", "rdma"})
    void statusCodeAndMessage(String scheme) throws Exception {
        EchoStatus echo = EchoStatus.newBuilder().setCode(2).setMessage("test status message").build();
        StatusRuntimeException unary = assertThrows(StatusRuntimeException.class, () -> blocking(scheme)
                .unaryCall(SimpleRequest.newBuilder().setResponseStatus(echo).build()));
        assertEquals(Status.Code.UNKNOWN, unary.getStatus().getCode());
        assertEquals("test status message", unary.getStatus().getDescription());

        Observer<StreamingOutputCallResponse> responses = new Observer<>();
        StreamObserver<StreamingOutputCallRequest> requests = async(scheme).fullDuplexCall(responses);
        requests.onNext(StreamingOutputCallRequest.newBuilder().setResponseStatus(echo).build());
        requests.onCompleted();
        Status status = responses.awaitStatus();
        assertEquals(Status.Code.UNKNOWN, status.getCode());
        assertEquals("test status message", status.getDescription());
    }

    @ParameterizedTest
    @ValueSource(strings = {"tcp", "rdma"})
    void customMetadata(String scheme) throws Exception {
        String initialValue = "test_initial_metadata_value";
        byte[] trailingValue = {(byte) 0xab, (byte) 0xab, (byte) 0xab};
        Metadata sent = new Metadata();
        sent.put(ECHO_INITIAL, initialValue);
        sent.put(ECHO_TRAILING, trailingValue);

        AtomicReference<Metadata> headers = new AtomicReference<>();
        AtomicReference<Metadata> trailers = new AtomicReference<>();
        SimpleResponse response = blocking(scheme)
                .withInterceptors(MetadataUtils.newAttachHeadersInterceptor(sent),
                        MetadataUtils.newCaptureMetadataInterceptor(headers, trailers))
                .unaryCall(SimpleRequest.newBuilder().setResponseSize(314159).setPayload(zeros(271828)).build());
        assertEquals(314159, response.getPayload().getBody().size());
        assertEquals(initialValue, headers.get().get(ECHO_INITIAL));
        assertArrayEquals(trailingValue, trailers.get().get(ECHO_TRAILING));

        headers.set(null);
        trailers.set(null);
        Observer<StreamingOutputCallResponse> responses = new Observer<>();
        StreamObserver<StreamingOutputCallRequest> requests = async(scheme)
                .withInterceptors(MetadataUtils.newAttachHeadersInterceptor(sent),
                        MetadataUtils.newCaptureMetadataInterceptor(headers, trailers))
                .fullDuplexCall(responses);
        requests.onNext(pingRequest(314159, 271828));
        assertEquals(314159, responses.next().getPayload().getBody().size());
        requests.onCompleted();
        assertEquals(Status.Code.OK, responses.awaitStatus().getCode());
        assertEquals(initialValue, headers.get().get(ECHO_INITIAL));
        assertArrayEquals(trailingValue, trailers.get().get(ECHO_TRAILING));
    }

    @ParameterizedTest
    @ValueSource(strings = {"tcp", "rdma"})
    void unimplementedMethod(String scheme) throws Exception {
        StatusRuntimeException e = assertThrows(StatusRuntimeException.class,
                () -> blocking(scheme).unimplementedCall(Empty.getDefaultInstance()));
        assertEquals(Status.Code.UNIMPLEMENTED, e.getStatus().getCode());
    }

    @ParameterizedTest
    @ValueSource(strings = {"tcp", "rdma"})
    void unimplementedService(String scheme) throws Exception {
        StatusRuntimeException e = assertThrows(StatusRuntimeException.class,
                () -> UnimplementedServiceGrpc.newBlockingStub(stack(scheme).channel())
                        .withDeadlineAfter(CALL_DEADLINE_SECONDS, TimeUnit.SECONDS)
                        .unimplementedCall(Empty.getDefaultInstance()));
        assertEquals(Status.Code.UNIMPLEMENTED, e.getStatus().getCode());
    }

    /**
     * A target gRPC resolves itself ({@code forAddress(host, port)}: its DNS resolver gives InetSocketAddresses) goes
     * over the scheme of the channel's event loop group, and gRPC derives the authority as usual.
     */
    @ParameterizedTest
    @ValueSource(strings = {"tcp", "rdma"})
    void aResolvedTargetTakesTheLoopsScheme(String scheme) throws Exception {
        Stack stack = stack(scheme);
        int port = ((InetSocketAddress) stack.server().getListenSockets().get(0)).getPort();
        ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", port)
                .channelType(CommunicatorSocketChannel.class)
                .eventLoopGroup(stack.group())
                .usePlaintext()
                .build();
        try {
            assertEquals(Empty.getDefaultInstance(), TestServiceGrpc.newBlockingStub(channel)
                    .withDeadlineAfter(CALL_DEADLINE_SECONDS, TimeUnit.SECONDS).emptyCall(Empty.getDefaultInstance()));
        } finally {
            channel.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
        }
    }

    /**
     * TLS as gRPC sets it up itself: the server's and the channel's {@code sslContext} (ALPN h2) put an SslHandler
     * into the pipeline, over either scheme, and the cases run as on plain text.
     */
    @ParameterizedTest
    @ValueSource(strings = {"tcp", "rdma"})
    void tlsFromTheBuildersSslContexts(String scheme) throws Exception {
        X509Bundle certificate = new CertificateBuilder().subject("CN=localhost").addSanDnsName("localhost")
                .setIsCertificateAuthority(true).ecp256().buildSelfSigned();
        EventLoopGroup group = stack(scheme).group();
        Server server = NettyServerBuilder.forAddress(new CommunicatorAddress(scheme + "://127.0.0.1:0"))
                .channelType(CommunicatorServerSocketChannel.class)
                .bossEventLoopGroup(group)
                .workerEventLoopGroup(group)
                .sslContext(GrpcSslContexts.configure(SslContextBuilder.forServer(
                        certificate.getKeyPair().getPrivate(), certificate.getCertificate())).build())
                .addService(new InteropService())
                .build()
                .start();
        ManagedChannel channel = null;
        try {
            int port = ((InetSocketAddress) server.getListenSockets().get(0)).getPort();
            channel = NettyChannelBuilder.forAddress(new CommunicatorAddress(scheme + "://127.0.0.1:" + port))
                    .overrideAuthority("localhost:" + port)
                    .channelType(CommunicatorSocketChannel.class)
                    .eventLoopGroup(group)
                    .sslContext(GrpcSslContexts.forClient().trustManager(certificate.getCertificate()).build())
                    .build();
            TestServiceGrpc.TestServiceBlockingStub stub = TestServiceGrpc.newBlockingStub(channel)
                    .withDeadlineAfter(CALL_DEADLINE_SECONDS, TimeUnit.SECONDS);
            assertEquals(Empty.getDefaultInstance(), stub.emptyCall(Empty.getDefaultInstance()));
            SimpleResponse response = stub.unaryCall(
                    SimpleRequest.newBuilder().setResponseSize(314159).setPayload(zeros(271828)).build());
            assertEquals(zeros(314159), response.getPayload());
        } finally {
            if (channel != null) {
                channel.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
            }
            server.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
        }
    }

    // ---- client side helper ----

    /** Collects a call's responses and its end. */
    private static final class Observer<T> implements StreamObserver<T> {
        final List<T> values = new ArrayList<>();
        private final BlockingQueue<T> arrivals = new LinkedBlockingQueue<>();
        private final CompletableFuture<Status> status = new CompletableFuture<>();

        @Override
        public synchronized void onNext(T value) {
            values.add(value);
            arrivals.add(value);
        }

        @Override
        public void onError(Throwable t) {
            status.complete(Status.fromThrowable(t));
        }

        @Override
        public void onCompleted() {
            status.complete(Status.OK);
        }

        T next() throws Exception {
            T value = arrivals.poll(CALL_DEADLINE_SECONDS, TimeUnit.SECONDS);
            if (value == null) {
                throw new AssertionError("no response within " + CALL_DEADLINE_SECONDS + " s, call status "
                        + status.getNow(null));
            }
            return value;
        }

        Status awaitStatus() throws Exception {
            return status.get(CALL_DEADLINE_SECONDS + 5, TimeUnit.SECONDS);
        }
    }

    // ---- the server ----

    /** The interop TestService as the cases above need it; UnimplementedCall is left to the base class. */
    private static final class InteropService extends TestServiceGrpc.TestServiceImplBase {

        private static boolean endsWithStatus(EchoStatus echo, StreamObserver<?> responses) {
            if (echo.getCode() == 0) {
                return false;
            }
            responses.onError(Status.fromCodeValue(echo.getCode()).withDescription(echo.getMessage())
                    .asRuntimeException());
            return true;
        }

        @Override
        public void emptyCall(Empty request, StreamObserver<Empty> responses) {
            responses.onNext(Empty.getDefaultInstance());
            responses.onCompleted();
        }

        @Override
        public void unaryCall(SimpleRequest request, StreamObserver<SimpleResponse> responses) {
            if (endsWithStatus(request.getResponseStatus(), responses)) {
                return;
            }
            responses.onNext(SimpleResponse.newBuilder().setPayload(zeros(request.getResponseSize())).build());
            responses.onCompleted();
        }

        @Override
        public void streamingOutputCall(StreamingOutputCallRequest request,
                StreamObserver<StreamingOutputCallResponse> responses) {
            for (ResponseParameters parameters : request.getResponseParametersList()) {
                responses.onNext(StreamingOutputCallResponse.newBuilder()
                        .setPayload(zeros(parameters.getSize())).build());
            }
            if (!endsWithStatus(request.getResponseStatus(), responses)) {
                responses.onCompleted();
            }
        }

        @Override
        public StreamObserver<StreamingInputCallRequest> streamingInputCall(
                StreamObserver<StreamingInputCallResponse> responses) {
            return new StreamObserver<>() {
                private int total;

                @Override
                public void onNext(StreamingInputCallRequest request) {
                    total += request.getPayload().getBody().size();
                }

                @Override
                public void onError(Throwable t) {
                }

                @Override
                public void onCompleted() {
                    responses.onNext(StreamingInputCallResponse.newBuilder().setAggregatedPayloadSize(total).build());
                    responses.onCompleted();
                }
            };
        }

        @Override
        public StreamObserver<StreamingOutputCallRequest> fullDuplexCall(
                StreamObserver<StreamingOutputCallResponse> responses) {
            return new StreamObserver<>() {
                private boolean ended;

                @Override
                public void onNext(StreamingOutputCallRequest request) {
                    if (ended) {
                        return;
                    }
                    for (ResponseParameters parameters : request.getResponseParametersList()) {
                        responses.onNext(StreamingOutputCallResponse.newBuilder()
                                .setPayload(zeros(parameters.getSize())).build());
                    }
                    ended = endsWithStatus(request.getResponseStatus(), responses);
                }

                @Override
                public void onError(Throwable t) {
                }

                @Override
                public void onCompleted() {
                    if (!ended) {
                        responses.onCompleted();
                    }
                }
            };
        }
    }

    /**
     * Echoes x-grpc-test-echo-initial into the response headers and x-grpc-test-echo-trailing-bin into the trailers,
     * as the custom_metadata case asks of an interop server.
     */
    private static final class EchoMetadata implements io.grpc.ServerInterceptor {
        @Override
        public <Q, R> io.grpc.ServerCall.Listener<Q> interceptCall(io.grpc.ServerCall<Q, R> call, Metadata headers,
                io.grpc.ServerCallHandler<Q, R> next) {
            String initial = headers.get(ECHO_INITIAL);
            byte[] trailing = headers.get(ECHO_TRAILING);
            return next.startCall(new io.grpc.ForwardingServerCall.SimpleForwardingServerCall<>(call) {
                @Override
                public void sendHeaders(Metadata responseHeaders) {
                    if (initial != null) {
                        responseHeaders.put(ECHO_INITIAL, initial);
                    }
                    super.sendHeaders(responseHeaders);
                }

                @Override
                public void close(Status status, Metadata trailers) {
                    if (trailing != null) {
                        trailers.put(ECHO_TRAILING, trailing);
                    }
                    super.close(status, trailers);
                }
            }, headers);
        }
    }
}
