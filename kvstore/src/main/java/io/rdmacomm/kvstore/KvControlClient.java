package io.rdmacomm.kvstore;

import com.google.protobuf.ByteString;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.NettyChannelBuilder;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.rdmacomm.api.Endpoint;
import io.rdmacomm.netty.CommunicatorAddress;
import io.rdmacomm.netty.CommunicatorIoHandler;
import io.rdmacomm.netty.CommunicatorSocketChannel;
import io.rdmacomm.kvstore.proto.ClearRequest;
import io.rdmacomm.kvstore.proto.KeyRequest;
import io.rdmacomm.kvstore.proto.KvControlGrpc;
import io.rdmacomm.kvstore.proto.OpenSessionReply;
import io.rdmacomm.kvstore.proto.OpenSessionRequest;
import io.rdmacomm.kvstore.proto.PutRequest;
import io.rdmacomm.kvstore.proto.RegisterBufferRequest;
import io.rdmacomm.kvstore.proto.StatReply;
import io.rdmacomm.kvstore.proto.StatsRequest;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * A connection to a kv server's gRPC control plane: statistics, metadata, administration, and the control-plane
 * PUT/GET/DELETE, whose values travel inside gRPC messages (for tools and tests; {@link KvClient} is the fast
 * path). Thread-safe. Every call is bounded by the timeout given at connect.
 *
 * <p>The server's address is {@code host:port} for a control plane on gRPC over TCP (kv-server's default), or the
 * {@code rdma://} or {@code tcp://} URI of one on the project's communicators (kv-server {@code --listen URI}).
 */
public final class KvControlClient implements AutoCloseable {
    private final String server;
    private final String host;
    private final ManagedChannel channel;
    /** The event loop of a channel on communicators; null for gRPC on TCP. */
    private final EventLoopGroup group;
    private final KvControlGrpc.KvControlBlockingStub stub;
    private final Duration timeout;

    /** The metadata of one key. */
    public record KeyInfo(long valueBytes, long version) {
    }

    private KvControlClient(String server, String host, ManagedChannel channel, EventLoopGroup group,
            Duration timeout) {
        this.server = server;
        this.host = host;
        this.channel = channel;
        this.group = group;
        this.stub = KvControlGrpc.newBlockingStub(channel);
        this.timeout = timeout;
    }

    /**
     * Opens a channel to the server's control plane at {@code host:port} (gRPC on TCP) or at an {@code rdma://} or
     * {@code tcp://} URI (gRPC on the project's communicators); nothing is sent until the first call.
     *
     * @throws IllegalArgumentException if {@code server} is neither
     */
    public static KvControlClient connect(String server, Duration timeout) {
        if (server.contains("://")) {
            return connectEndpoint(server, timeout);
        }
        Endpoint address;
        try {
            address = Endpoint.parse("tcp://" + server);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("bad server address '" + server + "': expected HOST:PORT, e.g."
                    + " 127.0.0.1:50051, or rdma://HOST:PORT or tcp://HOST:PORT");
        }
        ManagedChannel channel = Grpc.newChannelBuilderForAddress(address.host(), address.port(),
                InsecureChannelCredentials.create()).build();
        return new KvControlClient(server, address.host(), channel, null, timeout);
    }

    /** gRPC on a communicator channel to {@code rdma://} or {@code tcp://}, on an event loop of its own. */
    private static KvControlClient connectEndpoint(String server, Duration timeout) {
        Endpoint address;
        try {
            address = Endpoint.parse(server);
            KvServerConfig.checkControlEndpoint(address);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("bad server address '" + server + "': " + e.getMessage());
        }
        if (address.port() == 0) {
            throw new IllegalArgumentException("bad server address '" + server + "': port 0 names no server");
        }
        EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, new DefaultThreadFactory("kv-control-client-"
                + address.scheme(), true), CommunicatorIoHandler.newFactory(address.scheme()));
        try {
            ManagedChannel channel = NettyChannelBuilder.forAddress(new CommunicatorAddress(address.toString()))
                    .overrideAuthority(address.authority())
                    .channelType(CommunicatorSocketChannel.class)
                    .eventLoopGroup(group)
                    .usePlaintext()
                    .build();
            return new KvControlClient(server, address.host(), channel, group, timeout);
        } catch (RuntimeException e) {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
            throw e;
        }
    }

    /** The server's address as given: {@code host:port} or a URI. */
    public String server() {
        return server;
    }

    /** The server's host, for data endpoints that name a wildcard address. */
    String host() {
        return host;
    }

    Duration timeout() {
        return timeout;
    }

    public KvStats stats() throws IOException {
        return KvStats.of(call("stats", s -> s.stats(StatsRequest.getDefaultInstance())));
    }

    /** Removes every key; returns how many there were. */
    public long clear() throws IOException {
        return call("clear", s -> s.clear(ClearRequest.getDefaultInstance())).getRemoved();
    }

    /** The length and version of a key's value. */
    public KeyInfo stat(byte[] key) throws IOException {
        StatReply r = call("stat", s -> s.stat(keyRequest(key)));
        return new KeyInfo(r.getValueBytes(), r.getVersion());
    }

    /** Stores a value through the control plane; returns its version. */
    public long put(byte[] key, byte[] value) throws IOException {
        return call("put", s -> s.put(PutRequest.newBuilder().setKey(ByteString.copyFrom(key))
                .setValue(ByteString.copyFrom(value)).build())).getVersion();
    }

    /** A value through the control plane. */
    public byte[] get(byte[] key) throws IOException {
        return call("get", s -> s.get(keyRequest(key))).getValue().toByteArray();
    }

    /** Deletes a key through the control plane. */
    public void delete(byte[] key) throws IOException {
        call("delete", s -> s.delete(keyRequest(key)));
    }

    OpenSessionReply openSession(String clientName) throws IOException {
        return call("opening a session", s -> s.openSession(OpenSessionRequest.newBuilder()
                .setClientName(clientName).build()));
    }

    void registerBuffer(long session, long token, byte[] descriptor) throws IOException {
        call("registering the buffer", s -> s.registerBuffer(RegisterBufferRequest.newBuilder()
                .setSessionId(session).setToken(token).setRegionDescriptor(ByteString.copyFrom(descriptor))
                .build()));
    }

    /** Names the buffer of a session with inline values by its size alone: nothing is registered. */
    void registerBufferSize(long session, long token, long bytes) throws IOException {
        call("registering the buffer", s -> s.registerBuffer(RegisterBufferRequest.newBuilder()
                .setSessionId(session).setToken(token).setBufferBytes(bytes).build()));
    }

    private <T> T call(String what, Function<KvControlGrpc.KvControlBlockingStub, T> rpc) throws IOException {
        try {
            return rpc.apply(stub.withDeadlineAfter(timeout.toNanos(), TimeUnit.NANOSECONDS));
        } catch (StatusRuntimeException e) {
            Status.Code code = e.getStatus().getCode();
            if (code == Status.Code.UNAVAILABLE) {
                throw new IOException("cannot reach the kv server at " + server + " (" + what + "): "
                        + unavailable(e.getStatus()), e);
            }
            if (code == Status.Code.DEADLINE_EXCEEDED) {
                throw new IOException("the kv server at " + server + " did not answer " + what + " within "
                        + timeout.toMillis() + " ms", e);
            }
            throw GrpcErrors.fromStatus(e, what);
        }
    }

    /** What made the server unavailable: gRPC's description and, when it only says "io exception", the cause's. */
    private static String unavailable(Status status) {
        String description = status.getDescription();
        Throwable cause = status.getCause();
        if (cause == null || cause.getMessage() == null) {
            return description;
        }
        return description == null ? cause.getMessage() : description + ": " + cause.getMessage();
    }

    private static KeyRequest keyRequest(byte[] key) {
        return KeyRequest.newBuilder().setKey(ByteString.copyFrom(key)).build();
    }

    @Override
    public void close() {
        channel.shutdownNow();
        try {
            channel.awaitTermination(timeout.toNanos(), TimeUnit.NANOSECONDS);
            if (group != null) {
                group.shutdownGracefully(0, 1, TimeUnit.SECONDS).await(timeout.toNanos(), TimeUnit.NANOSECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            if (group != null) {
                group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
            }
        }
    }
}
