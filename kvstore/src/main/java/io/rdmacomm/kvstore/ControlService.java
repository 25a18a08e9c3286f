package io.rdmacomm.kvstore;

import com.google.protobuf.ByteString;
import com.google.protobuf.UnsafeByteOperations;
import io.grpc.stub.StreamObserver;
import io.rdmacomm.api.Access;
import io.rdmacomm.api.RegionDescriptor;
import io.rdmacomm.kvstore.proto.ClearReply;
import io.rdmacomm.kvstore.proto.ClearRequest;
import io.rdmacomm.kvstore.proto.DeleteReply;
import io.rdmacomm.kvstore.proto.GetReply;
import io.rdmacomm.kvstore.proto.KeyRequest;
import io.rdmacomm.kvstore.proto.KvControlGrpc;
import io.rdmacomm.kvstore.proto.OpenSessionReply;
import io.rdmacomm.kvstore.proto.OpenSessionRequest;
import io.rdmacomm.kvstore.proto.PutReply;
import io.rdmacomm.kvstore.proto.PutRequest;
import io.rdmacomm.kvstore.proto.RegisterBufferReply;
import io.rdmacomm.kvstore.proto.RegisterBufferRequest;
import io.rdmacomm.kvstore.proto.StatReply;
import io.rdmacomm.kvstore.proto.StatsReply;
import io.rdmacomm.kvstore.proto.StatsRequest;
import java.nio.ByteBuffer;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/** The gRPC control plane ({@code kv.proto}'s KvControl) on a server's store and sessions. */
final class ControlService extends KvControlGrpc.KvControlImplBase {
    /** A step of a call that may refuse with a {@link KvException}. */
    private interface Call<T> {
        T run() throws KvException;
    }

    private final Store store;
    private final Sessions sessions;
    private final KvServerConfig config;
    private final String dataEndpoint;
    private final ScheduledExecutorService timer;
    private final Supplier<KvStats> stats;
    private final ControlConnections connections;

    ControlService(Store store, Sessions sessions, KvServerConfig config, String dataEndpoint,
            ScheduledExecutorService timer, Supplier<KvStats> stats, ControlConnections connections) {
        this.store = store;
        this.connections = connections;
        this.sessions = sessions;
        this.config = config;
        this.dataEndpoint = dataEndpoint;
        this.timer = timer;
        this.stats = stats;
    }

    private static <T> void answer(StreamObserver<T> out, Call<T> call) {
        T reply;
        try {
            reply = call.run();
        } catch (KvException e) {
            out.onError(GrpcErrors.toStatus(e));
            return;
        }
        out.onNext(reply);
        out.onCompleted();
    }

    @Override
    public void openSession(OpenSessionRequest request, StreamObserver<OpenSessionReply> out) {
        answer(out, () -> {
            connections.checkRoom();
            Sessions.Session s = sessions.open(request.getClientName());
            timer.schedule(() -> sessions.endIfUnattached(s), config.attachTimeout().toMillis(),
                    TimeUnit.MILLISECONDS);
            return OpenSessionReply.newBuilder().setSessionId(s.id).setToken(s.token())
                    .setDataEndpoint(dataEndpoint).setMaxKeyBytes(config.maxKeyBytes())
                    .setMaxValueBytes(config.maxValueBytes()).setValuesInline(config.inlineValues()).build();
        });
    }

    @Override
    public void registerBuffer(RegisterBufferRequest request, StreamObserver<RegisterBufferReply> out) {
        answer(out, () -> {
            Sessions.Session s = sessions.find(request.getSessionId(), request.getToken());
            if (!s.attached()) {
                throw new KvException(KvException.Code.BAD_REQUEST, s + " has no data connection yet: attach it"
                        + " first, then register the buffer on it");
            }
            if (request.getRegionDescriptor().isEmpty()) {
                if (!config.inlineValues()) {
                    throw new KvException(KvException.Code.BAD_REQUEST, "this server moves values one-sided: register"
                            + " the buffer on the data connection and send its descriptor");
                }
                long bytes = request.getBufferBytes();
                if (bytes < 1 || bytes > Integer.MAX_VALUE) {
                    throw new KvException(KvException.Code.BAD_REQUEST, "buffer of " + Long.toUnsignedString(bytes)
                            + " bytes: must be 1 byte to 2g");
                }
                s.bufferBytes(bytes);
                return RegisterBufferReply.getDefaultInstance();
            }
            RegionDescriptor d;
            try {
                d = RegionDescriptor.fromBytes(request.getRegionDescriptor().toByteArray());
            } catch (IllegalArgumentException e) {
                throw new KvException(KvException.Code.BAD_REQUEST, "bad buffer descriptor: " + e.getMessage());
            }
            if (!d.access().containsAll(Access.readWrite())) {
                throw new KvException(KvException.Code.BAD_REQUEST, "the buffer must be registered with remote"
                        + " read and write access, got " + d.access());
            }
            s.buffer(d);
            return RegisterBufferReply.getDefaultInstance();
        });
    }

    @Override
    public void stat(KeyRequest request, StreamObserver<StatReply> out) {
        answer(out, () -> {
            Key.Probe key = probe(request.getKey());
            Store.Value v = pinned(key);
            try {
                return StatReply.newBuilder().setValueBytes(v.length).setVersion(v.version).build();
            } finally {
                store.unpin(v);
            }
        });
    }

    @Override
    public void stats(StatsRequest request, StreamObserver<StatsReply> out) {
        answer(out, () -> stats.get().toReply());
    }

    @Override
    public void clear(ClearRequest request, StreamObserver<ClearReply> out) {
        answer(out, () -> ClearReply.newBuilder().setRemoved(store.clear()).build());
    }

    @Override
    public void put(PutRequest request, StreamObserver<PutReply> out) {
        answer(out, () -> {
            store.puts.increment();
            Key.Probe key = probe(request.getKey());
            ByteString value = request.getValue();
            if (value.size() > config.maxValueBytes()) {
                throw refused(KvException.Code.VALUE_TOO_LARGE, "value of " + value.size() + " bytes exceeds the"
                        + " server's max value of " + config.maxValueBytes() + " bytes");
            }
            int block;
            try {
                block = store.reserve(value.size());
            } catch (KvException e) {
                store.errors.increment();
                throw e;
            }
            value.copyTo(store.slice(store.view(), block, value.size()));
            return PutReply.newBuilder().setVersion(store.install(key, block, value.size())).build();
        });
    }

    @Override
    public void get(KeyRequest request, StreamObserver<GetReply> out) {
        answer(out, () -> {
            store.gets.increment();
            Key.Probe key = probe(request.getKey());
            Store.Value v = pinned(key);
            try {
                ByteBuffer copy = ByteBuffer.allocate(v.length);
                copy.put(store.slice(store.view(), v.offset, v.length)).flip();
                return GetReply.newBuilder().setValue(UnsafeByteOperations.unsafeWrap(copy))
                        .setVersion(v.version).build();
            } finally {
                store.unpin(v);
            }
        });
    }

    @Override
    public void delete(KeyRequest request, StreamObserver<DeleteReply> out) {
        answer(out, () -> {
            store.deletes.increment();
            Key.Probe key = probe(request.getKey());
            if (!store.remove(key)) {
                store.misses.increment();
                throw notFound(key);
            }
            return DeleteReply.getDefaultInstance();
        });
    }

    private Store.Value pinned(Key.Probe key) throws KvException {
        Store.Value v = store.pin(key);
        if (v == null) {
            store.misses.increment();
            throw notFound(key);
        }
        return v;
    }

    private Key.Probe probe(ByteString key) throws KvException {
        if (key.isEmpty() || key.size() > config.maxKeyBytes()) {
            throw refused(KvException.Code.BAD_KEY, "key of " + key.size() + " bytes: keys must have 1 to "
                    + config.maxKeyBytes() + " bytes");
        }
        return new Key.Probe(key.size()).set(key.toByteArray());
    }

    private KvException refused(KvException.Code code, String message) {
        store.errors.increment();
        return new KvException(code, message);
    }

    private static KvException notFound(Key.Probe key) {
        return new KvException(KvException.Code.NOT_FOUND, "no such key " + key);
    }
}
