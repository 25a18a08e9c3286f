package io.rdmacomm.kvstore;

import io.rdmacomm.api.Communicator;
import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * The reply to the request a {@link DataSession} is serving: its {@link DataWire#REPLY_BYTES} bytes (status, value
 * length, version) and, with inline values ({@link ValueTransfer}), the GET's pinned value written after it. The
 * value's pin ends once it is sent, or when the session ends ({@link #release}).
 */
final class DataReply {
    private final Communicator peer;
    private final Store store;
    private final ByteBuffer pool;
    private final ByteBuffer reply = ByteBuffer.allocate(DataWire.REPLY_BYTES);
    /** A GET's pinned value to write after the reply (inline values), or null. */
    private Store.Value outgoing;

    DataReply(Communicator peer, Store store, ByteBuffer pool) {
        this.peer = peer;
        this.store = store;
        this.pool = pool;
    }

    /** Starts the reply to the next request. */
    void clear() {
        reply.clear();
    }

    void answer(int status, long length, long version) {
        reply.put((byte) status).put((byte) 0).putShort((short) 0).putInt((int) length).putLong(version);
    }

    /** A refusal, counted as an error of the store. */
    void refuse(KvException.Code code, long length) {
        store.errors.increment();
        answer(code.wire(), length, 0);
    }

    /** The pinned value {@code v} goes after the reply (inline values); its pin ends once it is sent. */
    void follow(Store.Value v) {
        outgoing = v;
    }

    /** Whether {@code v} is the value that goes after the reply (so its pin is this reply's to end). */
    boolean carries(Store.Value v) {
        return outgoing == v;
    }

    /** Writes the reply and, inline, the GET's value after it; the value's pin ends once it is sent. */
    void send() throws IOException {
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

    /** The session ends: gives back the pin of a value not sent. */
    void release() {
        if (outgoing != null) {
            store.unpin(outgoing);
            outgoing = null;
        }
    }
}
