package io.rdmacomm.kvstore;

import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.RegionDescriptor;
import io.rdmacomm.api.RemoteAccessException;
import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The server's side of one data connection, on a thread of its own: the attach, then requests until the client
 * closes. A GET puts the value from its pinned block into the client's buffer, a PUT gets it from the client's
 * buffer into a fresh block, each a one-sided operation issued by this thread on this connection, and only then
 * is the reply written (the contract's put and get return once the bytes are placed, so a reply never overtakes
 * its value). With inline values ({@link ValueTransfer}) this thread writes a GET's value after the reply from the
 * pinned block and reads a PUT's value from the connection into the fresh block. Whatever happens to the
 * connection, every pin and reserved block is given back.
 */
final class DataSession implements Runnable {
    private static final Logger LOG = LoggerFactory.getLogger(DataSession.class);

    private final Communicator peer;
    private final Store store;
    private final Sessions sessions;
    private final KvServerConfig config;
    private final ByteBuffer request = ByteBuffer.allocate(DataWire.REQUEST_BYTES);
    private final ByteBuffer reply = ByteBuffer.allocate(DataWire.REPLY_BYTES);
    private final Key.Probe key = new Key.Probe(DataWire.MAX_KEY);
    private final ByteBuffer keyBytes = ByteBuffer.wrap(key.array());
    private final ByteBuffer pool;
    private final boolean inline;
    /** A GET's pinned value to write after the reply (inline values), or null. */
    private Store.Value outgoing;
    /** Where a refused inline PUT's value goes; allocated at the first refusal. */
    private ByteBuffer discarded;
    private volatile boolean attached;

    DataSession(Communicator peer, Store store, Sessions sessions, KvServerConfig config) {
        this.peer = peer;
        this.store = store;
        this.sessions = sessions;
        this.config = config;
        this.pool = store.view();
        this.inline = config.inlineValues();
    }

    @Override
    public void run() {
        Sessions.Session session = null;
        boolean clean = false;
        try {
            session = attach();
            if (session != null) {
                LOG.info("{} attached from {}", session, peer.peerName());
                serve(session);
                clean = true;
                LOG.info("{} ended by the client", session);
            }
        } catch (IOException | RuntimeException e) {
            if (session != null) {
                LOG.info("{} failed: {}", session, e.toString());
            } else {
                LOG.info("data connection from {} dropped before it attached: {}", peer.peerName(), e.toString());
            }
        } finally {
            if (session != null) {
                sessions.end(session, !clean);
            }
            close();
        }
    }

    /** Closes the connection unless it attached to a session: for connections that stay silent too long. */
    void closeIfUnattached() {
        if (!attached) {
            close();
        }
    }

    void close() {
        try {
            peer.close();
        } catch (IOException e) {
            LOG.debug("closing the data connection from {}", peer.peerName(), e);
        }
    }

    private Sessions.Session attach() throws IOException {
        ByteBuffer hello = ByteBuffer.allocate(DataWire.ATTACH_BYTES);
        peer.readFully(hello);
        hello.flip();
        int magic = hello.getInt();
        short version = hello.getShort();
        if (magic != DataWire.MAGIC || version != DataWire.VERSION) {
            refuseAttach(KvException.Code.BAD_REQUEST, String.format("not a kv data connection: magic 0x%08x"
                    + " version %d, expected 0x%08x version %d", magic, version, DataWire.MAGIC, DataWire.VERSION));
            return null;
        }
        try {
            Sessions.Session s = sessions.attach(hello.getLong(), hello.getLong(), peer);
            attached = true;
            peer.write(ByteBuffer.allocate(3).put(DataWire.OK).putShort((short) 0).flip());
            peer.sync();
            return s;
        } catch (KvException e) {
            refuseAttach(e.code(), e.getMessage());
            return null;
        }
    }

    private void refuseAttach(KvException.Code code, String message) throws IOException {
        LOG.info("data connection from {} refused: {}", peer.peerName(), message);
        byte[] text = message.getBytes(StandardCharsets.UTF_8);
        peer.write(ByteBuffer.allocate(3 + text.length).put((byte) code.wire()).putShort((short) text.length)
                .put(text).flip());
        peer.sync();
    }

    private void serve(Sessions.Session session) throws IOException {
        for (;;) {
            request.clear();
            if (peer.read(request) < 0) {
                return;
            }
            peer.readFully(request);
            request.flip();
            byte op = request.get();
            request.get();
            int keyLength = request.getShort() & 0xffff;
            int length = request.getInt();
            long offset = request.getLong();
            readRest(keyBytes.clear().limit(keyLength));
            key.set(keyLength);
            reply.clear();
            if (keyLength == 0 || keyLength > config.maxKeyBytes()) {
                refuse(KvException.Code.BAD_KEY, 0);
                if (op == DataWire.PUT) {
                    discardInline(Integer.toUnsignedLong(length));
                }
            } else {
                switch (op) {
                    case DataWire.GET -> get(session.buffer(), Integer.toUnsignedLong(length), offset);
                    case DataWire.PUT -> put(session.buffer(), Integer.toUnsignedLong(length), offset);
                    case DataWire.DELETE -> delete();
                    default -> refuse(KvException.Code.BAD_REQUEST, 0);
                }
            }
            respond();
        }
    }

    /** Writes the reply and, inline, the GET's value after it; the value's pin ends once it is sent. */
    private void respond() throws IOException {
        Store.Value v = outgoing;
        outgoing = null;
        try {
            peer.write(reply.flip());
            if (v != null) {
                peer.write(store.slice(pool, v.offset, v.length));
            }
            peer.sync();
        } finally {
            if (v != null) {
                store.unpin(v);
            }
        }
    }

    private void get(RegionDescriptor buffer, long capacity, long offset) throws IOException {
        store.gets.increment();
        Store.Value v = store.pin(key);
        if (v == null) {
            store.misses.increment();
            answer(KvException.Code.NOT_FOUND.wire(), 0, 0);
            return;
        }
        try {
            if (v.length > capacity) {
                refuse(KvException.Code.BUFFER_TOO_SMALL, v.length);
            } else if (!fits(buffer, offset, v.length)) {
                refuse(KvException.Code.BAD_REQUEST, 0);
            } else if (inline) {
                outgoing = v;
                answer(DataWire.OK, v.length, v.version);
            } else {
                peer.put(store.slice(pool, v.offset, v.length), buffer, offset);
                answer(DataWire.OK, v.length, v.version);
            }
        } catch (RemoteAccessException e) {
            LOG.info("GET of {} into the buffer of {} refused: {}", key, peer.peerName(), e.getMessage());
            refuse(KvException.Code.TRANSFER_FAILED, 0);
        } finally {
            if (outgoing != v) {
                store.unpin(v);
            }
        }
    }

    private void put(RegionDescriptor buffer, long length, long offset) throws IOException {
        store.puts.increment();
        if (length > config.maxValueBytes()) {
            refuse(KvException.Code.VALUE_TOO_LARGE, 0);
            discardInline(length);
            return;
        }
        if (!fits(buffer, offset, length)) {
            refuse(KvException.Code.BAD_REQUEST, 0);
            discardInline(length);
            return;
        }
        int block;
        try {
            block = store.reserve((int) length);
        } catch (KvException e) {
            refuse(e.code(), 0);
            discardInline(length);
            return;
        }
        boolean installed = false;
        try {
            ByteBuffer into = store.slice(pool, block, (int) length);
            if (inline) {
                readRest(into);
            } else {
                peer.get(buffer, offset, into);
            }
            long version = store.install(key, block, (int) length);
            installed = true;
            answer(DataWire.OK, 0, version);
        } catch (RemoteAccessException e) {
            LOG.info("PUT of {} from the buffer of {} refused: {}", key, peer.peerName(), e.getMessage());
            refuse(KvException.Code.TRANSFER_FAILED, 0);
        } finally {
            if (!installed) {
                store.abandon(block);
            }
        }
    }

    private void delete() {
        store.deletes.increment();
        if (store.remove(key)) {
            answer(DataWire.OK, 0, 0);
        } else {
            store.misses.increment();
            answer(KvException.Code.NOT_FOUND.wire(), 0, 0);
        }
    }

    /** Reads the rest of a request: a client that closes in its middle is an error, not an end. */
    private void readRest(ByteBuffer dst) throws IOException {
        try {
            peer.readFully(dst);
        } catch (EOFException e) {
            throw new EOFException("the client closed in the middle of a request");
        }
    }

    /** Reads and drops the value of an inline PUT that was refused, so that the next request is read from its start. */
    private void discardInline(long length) throws IOException {
        if (!inline) {
            return;
        }
        if (discarded == null) {
            discarded = ByteBuffer.allocate(8192);
        }
        for (long left = length; left > 0; left -= discarded.limit()) {
            readRest(discarded.clear().limit((int) Math.min(discarded.capacity(), left)));
        }
    }

    /** Whether the client registered a buffer and {@code length} bytes at {@code offset} lie inside it. */
    private static boolean fits(RegionDescriptor buffer, long offset, long length) {
        return buffer != null && offset >= 0 && offset <= buffer.length() && length <= buffer.length() - offset;
    }

    private void refuse(KvException.Code code, long length) {
        store.errors.increment();
        answer(code.wire(), length, 0);
    }

    private void answer(int status, long length, long version) {
        reply.put((byte) status).put((byte) 0).putShort((short) 0).putInt((int) length).putLong(version);
    }
}
