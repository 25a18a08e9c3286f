package io.rdmacomm.kvstore;

import com.google.protobuf.ByteString;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.rdmacomm.api.Endpoint;
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
 */
public final class KvControlClient implements AutoCloseable {
    private final String server;
    private final String host;
    private final ManagedChannel channel;
    private final KvControlGrpc.KvControlBlockingStub stub;
    private final Duration timeout;

    /** The metadata of one key. */
    public record KeyInfo(long valueBytes, long version) {
    }

    private KvControlClient(String server, String host, ManagedChannel channel, Duration timeout) {
        this.server = server;
        this.host = host;
        this.channel = channel;
        this.stub = KvControlGrpc.newBlockingStub(channel);
        this.timeout = timeout;
    }

    /**
     * Opens a channel to the server's control plane at {@code host:port}; nothing is sent until the first call.
     *
     * @throws IllegalArgumentException if {@code server} is not {@code host:port}
     */
    public static KvControlClient connect(String server, Duration timeout) {
        Endpoint address;
        try {
            address = Endpoint.parse("tcp://" + server);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("bad server address '" + server + "': expected HOST:PORT, e.g."
                    + " 127.0.0.1:50051");
        }
        ManagedChannel channel = Grpc.newChannelBuilderForAddress(address.host(), address.port(),
                InsecureChannelCredentials.create()).build();
        return new KvControlClient(server, address.host(), channel, timeout);
    }

    /** The server's {@code host:port} as given. */
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
                        + e.getStatus().getDescription(), e);
            }
            if (code == Status.Code.DEADLINE_EXCEEDED) {
                throw new IOException("the kv server at " + server + " did not answer " + what + " within "
                        + timeout.toMillis() + " ms", e);
            }
            throw GrpcErrors.fromStatus(e, what);
        }
    }

    private static KeyRequest keyRequest(byte[] key) {
        return KeyRequest.newBuilder().setKey(ByteString.copyFrom(key)).build();
    }

    @Override
    public void close() {
        channel.shutdownNow();
        try {
            channel.awaitTermination(timeout.toNanos(), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
