package io.rdmacomm.kvstore;

import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.EndpointOption;
import io.rdmacomm.api.RegionDescriptor;
import io.rdmacomm.api.RemoteAccessException;
import java.io.EOFException;
import java.io.IOException;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The server's side of one data connection: the attach ({@link DataAttach}), then requests until the client
 * closes, each answered with a {@link DataReply}. A GET puts the value from its pinned block into the client's
 * buffer, a PUT gets it from the client's buffer into a fresh block, each a one-sided operation on this connection,
 * and only then is the reply written (the contract's put and get return once the bytes are placed, so a reply never
 * overtakes its value). With inline values ({@link ValueTransfer}) a GET's value is written after the reply from the
 * pinned block and a PUT's value is read from the connection into the fresh block. Whatever happens to the
 * connection, every pin and reserved block is given back.
 *
 * <p>Requests are taken apart by a state machine that reads whatever has arrived (header, key, an inline value in
 * pieces), so the same code serves a connection two ways. On a {@link DataLoop} (when the transport can say what is
 * readable: {@link Communicator#notifyReadable}) it reads only what {@link Communicator#available()} reports, never
 * waiting for the client, and asks to be told when more arrives; the loop's one thread serves every connection.
 * Otherwise the thread that attached it keeps it and waits in its reads.
 */
final class DataSession implements Runnable {
    private static final Logger LOG = LoggerFactory.getLogger(DataSession.class);
    /** Requests a loop serves on one connection before it moves on to the others: no connection starves them. */
    private static final int REQUESTS_PER_TURN = 16;
    /** The key array a session starts with; a longer key grows it. */
    private static final int KEY_BYTES = 128;

    private enum Phase { HEADER, KEY, VALUE, DISCARD }

    private final Communicator peer;
    private final Store store;
    private final Sessions sessions;
    private final KvServerConfig config;
    /** The loop to serve on once attached, or null for a thread of its own. */
    private final DataLoop loop;
    /** The server's open connections, which this one leaves when it closes. */
    private final Set<DataSession> open;
    private final ByteBuffer request = ByteBuffer.allocate(DataWire.REQUEST_BYTES);
    private final DataReply reply;
    /**
     * The request's key: {@link #KEY_BYTES} at first, grown to the longest key a request of this session named (up to
     * the wire's 64 KiB): a session that sends short keys holds no 64 KiB array.
     */
    private final Key.Probe key = new Key.Probe(KEY_BYTES);
    private ByteBuffer keyBytes = ByteBuffer.wrap(key.array());
    private final ByteBuffer pool;
    private final boolean inline;
    private final long readTimeoutNanos;
    /** Queues this connection on its loop: the listener of {@link Communicator#notifyReadable}. */
    private final Runnable whenReadable = this::queue;
    private final Runnable turn = this::turn;
    private volatile boolean attached;
    private Sessions.Session session;
    /**
     * Whether the loop polls this connection before arming it when it has nothing to read: its transport has no
     * progress for {@link DataLoop}'s idle spin to drive ({@link Communicator#busyPoll} returns false at once).
     */
    private boolean loopPolls;

    // the request being taken apart
    private Phase phase = Phase.HEADER;
    private byte op;
    private long length;
    private long offset;
    /** An inline PUT's reserved block while its value arrives, or -1. */
    private int reserved = -1;
    /** An inline PUT's destination in the pool while its value arrives. */
    private ByteBuffer into;
    /** Bytes of a refused inline PUT's value still to drop. */
    private long discardLeft;
    /** Where a refused inline PUT's value goes; allocated at the first refusal. */
    private ByteBuffer discarded;

    DataSession(Communicator peer, Store store, Sessions sessions, KvServerConfig config, DataLoop loop,
            Set<DataSession> open) {
        this.peer = peer;
        this.open = open;
        this.store = store;
        this.sessions = sessions;
        this.config = config;
        this.loop = loop;
        this.pool = store.view();
        this.reply = new DataReply(peer, store, pool);
        this.inline = config.inlineValues();
        this.readTimeoutNanos = peer.endpoint().duration(EndpointOption.READ_TIMEOUT).toNanos();
    }

    /** Attaches, then serves: on the loop if there is one and the transport can tell what is readable, else here. */
    @Override
    public void run() {
        boolean handedOver = false;
        try {
            session = DataAttach.attach(peer, sessions, () -> attached = true);
            if (session == null) {
                return;
            }
            LOG.info("{} attached from {}", session, peer.peerName());
            if (loop != null) {
                // from here the loop owns this connection: the listener may already run, on this thread
                // a transport without progress to drive (tcp://, local://) returns false at once
                boolean announced = !peer.busyPoll(0, () -> true);
                loopPolls = loop.spins() && announced;
                loop.joined(peer, announced);
                handedOver = peer.notifyReadable(whenReadable);
                if (!handedOver) {
                    loop.left(peer);
                }
                if (handedOver) {
                    return;
                }
                LOG.debug("{}: {} cannot say what is readable; the session keeps a thread", session,
                        peer.endpoint());
            }
            while (serve(Integer.MAX_VALUE, Integer.MAX_VALUE) >= 0) {
                // it returns short of the end only when a read timed out (see serve): the thread waits on
            }
            end(null);
        } catch (IOException | RuntimeException e) {
            end(e);
        } finally {
            if (session == null) {
                close();
            }
        }
    }

    /** Closes the connection unless it attached to a session: for connections that stay silent too long. */
    void closeIfUnattached() {
        if (!attached) {
            close();
        }
    }

    void close() {
        open.remove(this);
        if (loop != null) {
            loop.left(peer);
        }
        try {
            peer.close();
        } catch (IOException e) {
            LOG.debug("closing the data connection from {}", peer.peerName(), e);
        }
    }

    private void queue() {
        loop.submit(turn);
    }

    /** On the loop's thread: whether a turn would find something (bytes, the end, a failure). */
    boolean hasInput() {
        try {
            return peer.available() != 0;
        } catch (IOException | RuntimeException e) {
            return true; // the turn meets it again and ends the session
        }
    }

    /** On the loop's thread: asks to be told when there is something to read. */
    void arm() {
        peer.notifyReadable(whenReadable);
    }

    /** A turn on the loop's thread: serves what has arrived, then asks to be told of more (or ends the session). */
    void turn() {
        try {
            int served = 0;
            for (;;) {
                int available = peer.available();
                if (available == 0) {
                    if (loopPolls) {
                        loop.poll(this);
                    } else {
                        arm();
                    }
                    return;
                }
                if (available < 0) {
                    if (!betweenRequests()) {
                        throw closedMidRequest();
                    }
                    end(null);
                    return;
                }
                int n = serve(available, REQUESTS_PER_TURN - served);
                if (n < 0) {
                    end(null);
                    return;
                }
                served += n;
                if (served >= REQUESTS_PER_TURN) {
                    queue(); // the others' turn; this connection's next requests wait for its next one
                    return;
                }
            }
        } catch (IOException | RuntimeException e) {
            end(e);
        }
    }

    /**
     * Reads at most {@code budget} bytes (each read at most what is left of it: on a loop, what is available, so no
     * read waits; otherwise a read waits for at least a byte) and serves the requests they complete, at most
     * {@code requests}; returns how many it served, or -1 at a clean end of the client's stream.
     *
     * @throws EOFException if the stream ends in the middle of a request
     */
    private int serve(int budget, int requests) throws IOException {
        int completed = 0;
        int left = budget;
        while (completed < requests) {
            ByteBuffer dst = switch (phase) {
                case HEADER -> request;
                case KEY -> keyBytes;
                case VALUE -> into;
                case DISCARD -> discarded.clear().limit((int) Math.min(discarded.capacity(), discardLeft));
            };
            if (dst.hasRemaining()) {
                if (left == 0) {
                    break;
                }
                int limit = dst.limit();
                dst.limit(dst.position() + Math.min(dst.remaining(), left));
                int n;
                long start = System.nanoTime();
                try {
                    n = peer.read(dst);
                } catch (SocketTimeoutException e) {
                    if (System.nanoTime() - start < readTimeoutNanos / 2) {
                        throw e; // not the read's own timeout: the connection failed (e.g. liveness)
                    }
                    // a waiting read (a thread of its own) timed out: the endpoint's readTimeout, set to bound a
                    // loop's writes, passed without a byte; nothing was read or lost, so the thread waits on
                    return completed;
                } finally {
                    dst.limit(limit);
                }
                if (n < 0) {
                    if (betweenRequests()) {
                        return -1;
                    }
                    throw closedMidRequest();
                }
                left -= n;
                if (phase == Phase.DISCARD) {
                    discardLeft -= n;
                }
            }
            if (advance()) {
                completed++;
            }
        }
        return completed;
    }

    /** Whether no byte of a next request has been read: where the client's stream may end cleanly. */
    private boolean betweenRequests() {
        return phase == Phase.HEADER && request.position() == 0;
    }

    private static EOFException closedMidRequest() {
        return new EOFException("the client closed in the middle of a request");
    }

    /** Moves on once the part being read is complete; true when that completed a request (its reply is sent). */
    private boolean advance() throws IOException {
        switch (phase) {
            case HEADER -> {
                if (request.hasRemaining()) {
                    return false;
                }
                request.flip();
                op = request.get();
                request.get();
                int keyLength = request.getShort() & 0xffff;
                length = Integer.toUnsignedLong(request.getInt());
                offset = request.getLong();
                request.clear();
                if (key.ensureCapacity(keyLength)) {
                    keyBytes = ByteBuffer.wrap(key.array());
                }
                keyBytes.clear().limit(keyLength);
                phase = Phase.KEY;
                return false; // an empty key is complete at once: the next call gets to it without reading
            }
            case KEY -> {
                if (keyBytes.hasRemaining()) {
                    return false;
                }
                key.set(keyBytes.limit());
                return dispatch();
            }
            case VALUE -> {
                if (into.hasRemaining()) {
                    return false;
                }
                return installPut();
            }
            case DISCARD -> {
                if (discardLeft > 0) {
                    return false;
                }
                return respond();
            }
            default -> throw new IllegalStateException(phase.toString());
        }
    }

    /** The request's key is in: serves it, or starts reading (or dropping) an inline PUT's value. */
    private boolean dispatch() throws IOException {
        reply.clear();
        int keyLength = keyBytes.limit();
        if (keyLength == 0 || keyLength > config.maxKeyBytes()) {
            reply.refuse(KvException.Code.BAD_KEY, 0);
            return op == DataWire.PUT ? discard(length) : respond();
        }
        switch (op) {
            case DataWire.GET -> get(session.buffer(), length, offset);
            case DataWire.PUT -> {
                return put(session.buffer(), length, offset);
            }
            case DataWire.DELETE -> delete();
            default -> reply.refuse(KvException.Code.BAD_REQUEST, 0);
        }
        return respond();
    }

    /** Writes the reply and, inline, the GET's value after it ({@link DataReply#send}); the request is complete. */
    private boolean respond() throws IOException {
        phase = Phase.HEADER;
        reply.send();
        return true;
    }

    private void get(RegionDescriptor buffer, long capacity, long offset) throws IOException {
        store.gets.increment();
        Store.Value v = store.pin(key);
        if (v == null) {
            store.misses.increment();
            reply.answer(KvException.Code.NOT_FOUND.wire(), 0, 0);
            return;
        }
        try {
            if (v.length > capacity) {
                reply.refuse(KvException.Code.BUFFER_TOO_SMALL, v.length);
            } else if (!fits(session.bufferBytes(), offset, v.length)) {
                reply.refuse(KvException.Code.BAD_REQUEST, 0);
            } else if (inline) {
                reply.follow(v);
                reply.answer(DataWire.OK, v.length, v.version);
            } else {
                peer.put(store.slice(pool, v.offset, v.length), buffer, offset);
                reply.answer(DataWire.OK, v.length, v.version);
            }
        } catch (RemoteAccessException e) {
            LOG.info("GET of {} into the buffer of {} refused: {}", key, peer.peerName(), e.getMessage());
            reply.refuse(KvException.Code.TRANSFER_FAILED, 0);
        } finally {
            if (!reply.carries(v)) {
                store.unpin(v);
            }
        }
    }

    /** A PUT: one-sided, served at once; inline, its value is read next (true when the request is complete). */
    private boolean put(RegionDescriptor buffer, long length, long offset) throws IOException {
        store.puts.increment();
        if (length > config.maxValueBytes()) {
            reply.refuse(KvException.Code.VALUE_TOO_LARGE, 0);
            return discard(length);
        }
        if (!fits(session.bufferBytes(), offset, length)) {
            reply.refuse(KvException.Code.BAD_REQUEST, 0);
            return discard(length);
        }
        try {
            reserved = store.reserve((int) length);
        } catch (KvException e) {
            reply.refuse(e.code(), 0);
            return discard(length);
        }
        into = store.slice(pool, reserved, (int) length);
        if (inline) {
            phase = Phase.VALUE;
            return false;
        }
        try {
            peer.get(buffer, offset, into);
        } catch (RemoteAccessException e) {
            LOG.info("PUT of {} from the buffer of {} refused: {}", key, peer.peerName(), e.getMessage());
            reply.refuse(KvException.Code.TRANSFER_FAILED, 0);
            abandon();
            return respond();
        }
        return installPut();
    }

    /** The PUT's value is in its block: installs it and replies. */
    private boolean installPut() throws IOException {
        long version = store.install(key, reserved, (int) length);
        reserved = -1;
        into = null;
        reply.answer(DataWire.OK, 0, version);
        return respond();
    }

    private void abandon() {
        if (reserved >= 0) {
            store.abandon(reserved);
            reserved = -1;
            into = null;
        }
    }

    private void delete() {
        store.deletes.increment();
        if (store.remove(key)) {
            reply.answer(DataWire.OK, 0, 0);
        } else {
            store.misses.increment();
            reply.answer(KvException.Code.NOT_FOUND.wire(), 0, 0);
        }
    }

    /**
     * After a refused PUT: inline, its value follows and is read and dropped before the reply, so the next request
     * is read from its start; true if the request is complete.
     */
    private boolean discard(long length) throws IOException {
        if (!inline || length == 0) {
            return respond();
        }
        if (discarded == null) {
            discarded = ByteBuffer.allocate(8192);
        }
        discardLeft = length;
        phase = Phase.DISCARD;
        return false;
    }

    /** Ends the session (clean if {@code failure} is null), gives back what it holds and closes the connection. */
    private void end(Exception failure) {
        abandon();
        reply.release();
        if (session != null) {
            if (failure == null) {
                LOG.info("{} ended by the client", session);
            } else {
                LOG.info("{} failed: {}", session, failure.toString());
            }
            sessions.end(session, failure != null);
        } else if (failure != null) {
            LOG.info("data connection from {} dropped before it attached: {}", peer.peerName(), failure.toString());
        }
        close();
    }

    /**
     * Whether the client registered a buffer (of {@code bufferBytes}, -1 if none) and {@code length} bytes at
     * {@code offset} lie inside it. One-sided, the session also has the buffer's descriptor: only inline sessions may
     * register a size alone.
     */
    private static boolean fits(long bufferBytes, long offset, long length) {
        return bufferBytes >= 0 && offset >= 0 && offset <= bufferBytes && length <= bufferBytes - offset;
    }
}
