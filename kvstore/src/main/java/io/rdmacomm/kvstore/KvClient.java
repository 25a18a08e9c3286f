package io.rdmacomm.kvstore;

import io.rdmacomm.api.Access;
import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.Communicators;
import io.rdmacomm.api.Endpoint;
import io.rdmacomm.api.EndpointOption;
import io.rdmacomm.api.MemoryRegion;
import io.rdmacomm.api.Units;
import io.rdmacomm.kvstore.proto.OpenSessionReply;
import java.io.IOException;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Objects;

/**
 * A session with a kv server: a control-plane connection ({@link #control()}, its own or one shared by the
 * sessions of a process) and a data connection with a registered buffer. {@link #get} has the server put the
 * value into that buffer and returns a view of it; {@link #put} copies the value into the buffer and has the server
 * get it from there. When the server sends values inline ({@link ValueTransfer}), a GET's value is read from the
 * data connection into the same buffer and a PUT's is written after the request. One operation at a time: use one
 * client per thread.
 *
 * <pre>{@code
 * try (KvClient kv = KvClient.connect("127.0.0.1:50051", KvClient.Options.defaults())) {
 *     kv.put(key, value);
 *     ByteBuffer v = kv.get(key); // valid until the next operation
 * }
 * }</pre>
 */
public final class KvClient implements AutoCloseable {
    private static final long REGISTRATION_HEADROOM = 64L << 20;

    /**
     * How a client connects.
     *
     * @param bufferBytes the registered buffer: the largest value this client can put or get
     * @param clientName free text for the server's logs
     * @param busyPoll the data connection's busyPoll (tcp:// and rdma://), or null for the transport's default
     * @param timeout bounds every call on both planes
     */
    public record Options(long bufferBytes, String clientName, Duration busyPoll, Duration timeout) {
        public Options {
            if (bufferBytes < 1 || bufferBytes > Integer.MAX_VALUE - 8) {
                throw new IllegalArgumentException("buffer of " + bufferBytes + " bytes: must be 1 byte to 2g");
            }
            Objects.requireNonNull(clientName, "clientName");
            Objects.requireNonNull(timeout, "timeout");
            if (timeout.isNegative() || timeout.isZero()) {
                throw new IllegalArgumentException("timeout must be positive, got " + timeout);
            }
        }

        /** A 64 MiB buffer, the transport's busyPoll, 30 s timeout. */
        public static Options defaults() {
            return new Options(64L << 20, "", null, Duration.ofSeconds(30));
        }

        public Options withBuffer(long bytes) {
            return new Options(bytes, clientName, busyPoll, timeout);
        }

        public Options withName(String name) {
            return new Options(bufferBytes, name, busyPoll, timeout);
        }

        public Options withBusyPoll(Duration spin) {
            return new Options(bufferBytes, clientName, spin, timeout);
        }
    }

    private final KvControlClient control;
    /** Whether {@link #close()} closes {@link #control} too (false: the caller shares it between sessions). */
    private final boolean ownsControl;
    private final Communicator data;
    private final ByteBuffer buffer;
    private final ByteBuffer view;
    private final int maxKey;
    private final boolean inline;
    private final ByteBuffer request;
    private final ByteBuffer reply = ByteBuffer.allocate(DataWire.REPLY_BYTES);
    /** The operation in flight (0: none), its key and the length it named, for the refusal's message. */
    private byte pendingOp;
    private byte[] pendingKey;
    private long pendingLength;

    private KvClient(KvControlClient control, boolean ownsControl, Communicator data, ByteBuffer buffer, int maxKey,
            boolean inline) {
        this.control = control;
        this.ownsControl = ownsControl;
        this.data = data;
        this.buffer = buffer;
        this.view = buffer.asReadOnlyBuffer();
        this.maxKey = maxKey;
        this.inline = inline;
        this.request = ByteBuffer.allocate(DataWire.REQUEST_BYTES + maxKey);
    }

    /**
     * Opens a session with the server at {@code host:port}, or at an {@code rdma://} or {@code tcp://} URI
     * ({@link KvControlClient#connect}): its control plane, then its data plane, then the buffer registered on the
     * data connection. On failure nothing stays open.
     */
    public static KvClient connect(String server, Options options) throws IOException {
        KvControlClient control = KvControlClient.connect(server, options.timeout());
        try {
            return open(control, true, options);
        } catch (IOException | RuntimeException e) {
            control.close();
            throw e;
        }
    }

    /**
     * Opens a session over a control plane that the caller shares between sessions (one gRPC connection for all
     * the sessions of a process, where {@link #connect(String, Options)} opens one per session): the session's own
     * data connection and buffer, as there. {@link #close()} leaves {@code control} open; the caller closes it
     * after its sessions. On failure nothing of the session stays open.
     */
    public static KvClient connect(KvControlClient control, Options options) throws IOException {
        return open(Objects.requireNonNull(control, "control"), false, options);
    }

    private static KvClient open(KvControlClient control, boolean ownsControl, Options options) throws IOException {
        Communicator data = null;
        try {
            OpenSessionReply session = control.openSession(options.clientName());
            Endpoint endpoint = dataEndpoint(Endpoint.parse(session.getDataEndpoint()), control.host(), options);
            data = Communicators.open(endpoint);
            try {
                data.connect();
            } catch (IOException e) {
                throw new IOException("cannot connect the data plane at " + endpoint + ": " + e.getMessage(), e);
            }
            attach(data, session.getSessionId(), session.getToken());
            ByteBuffer buffer = ByteBuffer.allocateDirect((int) options.bufferBytes());
            if (session.getValuesInline()) {
                // the server never touches the buffer: values arrive on the connection, which stays the reading
                // thread's own (registering memory hands a tcp:// socket to a progress thread for good)
                control.registerBufferSize(session.getSessionId(), session.getToken(), buffer.capacity());
            } else {
                MemoryRegion region = data.register(buffer, Access.readWrite());
                control.registerBuffer(session.getSessionId(), session.getToken(), region.descriptor().toBytes());
            }
            return new KvClient(control, ownsControl, data, buffer, session.getMaxKeyBytes(),
                    session.getValuesInline());
        } catch (IOException | RuntimeException e) {
            if (data != null) {
                try {
                    data.close();
                } catch (IOException suppressed) {
                    e.addSuppressed(suppressed);
                }
            }
            throw e;
        }
    }

    /** The data endpoint the server named, on the server's host if it named a wildcard, with our options. */
    private static Endpoint dataEndpoint(Endpoint named, String serverHost, Options options)
            throws UnknownHostException {
        Endpoint e = named;
        if (!e.scheme().equals("local") && InetAddress.getByName(e.host()).isAnyLocalAddress()) {
            Endpoint moved = Endpoint.of(e.scheme(), serverHost, e.port());
            e = e.isSet(EndpointOption.PROVIDER)
                    ? moved.with(EndpointOption.PROVIDER, e.string(EndpointOption.PROVIDER)) : moved;
        }
        e = e.with(EndpointOption.READ_TIMEOUT, options.timeout().toMillis() + "ms");
        if (options.busyPoll() != null && EndpointOption.BUSY_POLL.appliesTo(e.scheme())) {
            e = e.with(EndpointOption.BUSY_POLL, options.busyPoll().toNanos() / 1000 + "us");
        }
        long needed = options.bufferBytes() + REGISTRATION_HEADROOM;
        if (needed > e.size(EndpointOption.MAX_REGISTERED)) {
            e = e.with(EndpointOption.MAX_REGISTERED, Long.toString(needed));
        }
        return e;
    }

    private static void attach(Communicator data, long session, long token) throws IOException {
        data.write(ByteBuffer.allocate(DataWire.ATTACH_BYTES).putInt(DataWire.MAGIC).putShort(DataWire.VERSION)
                .putLong(session).putLong(token).flip());
        data.sync();
        ByteBuffer head = ByteBuffer.allocate(3);
        data.readFully(head);
        int status = head.flip().get() & 0xff;
        ByteBuffer message = ByteBuffer.allocate(head.getShort() & 0xffff);
        data.readFully(message);
        if (status != DataWire.OK) {
            KvException.Code code = KvException.Code.ofWire(status);
            throw new KvException(code != null ? code : KvException.Code.BAD_REQUEST, "the server refused the"
                    + " data connection: " + new String(message.array(), StandardCharsets.UTF_8));
        }
    }

    /** The control plane of the same server. */
    public KvControlClient control() {
        return control;
    }

    /** The registered buffer's size: the largest value this client can put or get. */
    public int bufferBytes() {
        return buffer.capacity();
    }

    /**
     * Stores the remaining bytes of {@code value} (its position is left alone) and returns the new version.
     * Visible to every GET that starts after this returns.
     *
     * @throws KvException BUFFER_TOO_SMALL, VALUE_TOO_LARGE, POOL_FULL, BAD_KEY, ...
     */
    public long put(byte[] key, ByteBuffer value) throws IOException {
        startPut(key, value);
        return finishPut();
    }

    public long put(byte[] key, byte[] value) throws IOException {
        return put(key, ByteBuffer.wrap(value));
    }

    /**
     * The key's value: a read-only view of this client's buffer, where the server placed it, valid until the next
     * operation of this client.
     *
     * @throws KvException NOT_FOUND if the key is not stored; BUFFER_TOO_SMALL if the value exceeds the buffer
     */
    public ByteBuffer get(byte[] key) throws IOException {
        startGet(key);
        return finishGet();
    }

    /**
     * Sends a PUT without waiting for its answer: {@link #finishPut()} waits and returns what {@link #put} would.
     * With {@link #startGet} and {@link #finishGet()}, one thread can keep an operation in flight on each of several
     * clients, as an event loop drives several connections; a client has at most one operation in flight.
     *
     * @throws IllegalStateException if an operation of this client is in flight
     */
    public void startPut(byte[] key, ByteBuffer value) throws IOException {
        int n = value.remaining();
        if (n > buffer.capacity()) {
            throw new KvException(KvException.Code.BUFFER_TOO_SMALL, "value of " + n + " bytes does not fit the"
                    + " client's buffer of " + buffer.capacity() + " bytes (--buffer)");
        }
        if (inline) {
            send(DataWire.PUT, key, n);
            data.write(value.duplicate());
        } else {
            buffer.put(0, value, value.position(), n);
            send(DataWire.PUT, key, n);
        }
        flush(DataWire.PUT, key, n);
    }

    /** The answer to the PUT {@link #startPut} sent: its new version. */
    public long finishPut() throws IOException {
        int status = receive(DataWire.PUT);
        reply.position(8);
        long version = reply.getLong();
        if (status != DataWire.OK) {
            throw refusal(status, pendingKey, pendingLength);
        }
        return version;
    }

    /** Sends a GET without waiting for its answer (see {@link #startPut}). */
    public void startGet(byte[] key) throws IOException {
        send(DataWire.GET, key, buffer.capacity());
        flush(DataWire.GET, key, buffer.capacity());
    }

    /** The answer to the GET {@link #startGet} sent: as {@link #get} returns it. */
    public ByteBuffer finishGet() throws IOException {
        int status = receive(DataWire.GET);
        reply.position(4);
        int length = reply.getInt();
        if (status != DataWire.OK) {
            throw refusal(status, pendingKey, Integer.toUnsignedLong(length));
        }
        if (inline) {
            data.readFully(buffer.clear().limit(length));
        }
        return view.clear().limit(length);
    }

    /** Deletes the key; false if it was not stored. */
    public boolean delete(byte[] key) throws IOException {
        send(DataWire.DELETE, key, 0);
        flush(DataWire.DELETE, key, 0);
        int status = receive(DataWire.DELETE);
        if (status == KvException.Code.NOT_FOUND.wire()) {
            return false;
        }
        if (status != DataWire.OK) {
            throw refusal(status, pendingKey, 0);
        }
        return true;
    }

    /** The server's figures, through the control plane. */
    public KvStats stats() throws IOException {
        return control.stats();
    }

    /** Writes a request for {@code length} bytes at offset 0 of the buffer, unsynced. */
    private void send(byte op, byte[] key, int length) throws IOException {
        if (pendingOp != 0) {
            throw new IllegalStateException("an operation of this client is in flight: finish it first");
        }
        if (key.length == 0 || key.length > maxKey) {
            throw new KvException(KvException.Code.BAD_KEY, "key of " + key.length + " bytes: keys must have 1 to "
                    + maxKey + " bytes (the server's --max-key)");
        }
        request.clear();
        request.put(op).put((byte) 0).putShort((short) key.length).putInt(length).putLong(0).put(key);
        data.write(request.flip());
    }

    /** Sends what was written: the request of {@code op} is in flight. */
    private void flush(byte op, byte[] key, long length) throws IOException {
        data.sync();
        pendingOp = op;
        pendingKey = key;
        pendingLength = length;
    }

    /** Reads the reply to the operation in flight, which must be {@code op}; returns its status. */
    private int receive(byte op) throws IOException {
        if (pendingOp != op) {
            throw new IllegalStateException(pendingOp == 0 ? "no operation of this client is in flight"
                    : "the operation in flight is not the one being finished");
        }
        pendingOp = 0;
        reply.clear();
        data.readFully(reply);
        return reply.flip().get() & 0xff;
    }

    private KvException refusal(int status, byte[] key, long length) {
        KvException.Code code = KvException.Code.ofWire(status);
        String k = Key.display(key, key.length);
        if (code == null) {
            return new KvException(KvException.Code.BAD_REQUEST, "the server answered status " + status
                    + " for key " + k + ", which this client does not know");
        }
        return new KvException(code, switch (code) {
            case NOT_FOUND -> "no such key " + k;
            case POOL_FULL -> "the server's memory pool is full: no room for a value of " + length + " bytes";
            case VALUE_TOO_LARGE -> "value of " + length + " bytes exceeds the server's max value (--max-value)";
            case BAD_KEY -> "key " + k + " refused: keys must have 1 to " + maxKey + " bytes";
            case BUFFER_TOO_SMALL -> "the value of " + k + " has " + length + " bytes, more than the client's"
                    + " buffer of " + Units.formatSize(buffer.capacity()) + " (--buffer)";
            case TRANSFER_FAILED -> "the server could not move the value of " + k + " to or from the client's"
                    + " buffer (see the server's log)";
            default -> "the server refused the request for " + k + ": " + code;
        });
    }

    /**
     * Ends the session: closes the data connection (which ends the session on the server) and the control plane,
     * unless it was shared ({@link #connect(KvControlClient, Options)}).
     */
    @Override
    public void close() throws IOException {
        try {
            data.close();
        } finally {
            if (ownsControl) {
                control.close();
            }
        }
    }
}
