package io.rdmacomm.kvstore;

import io.rdmacomm.api.Communicator;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The attach that opens a kv data connection, before a {@link DataSession} serves its requests: the client's ATTACH
 * ({@link DataWire#MAGIC}, {@link DataWire#VERSION}, then its session's id and token) is read, checked against
 * {@link Sessions} and answered: OK, or a refusal with its reason in UTF-8.
 */
final class DataAttach {
    /** Its lines are the data connection's: logged under {@link DataSession}'s name. */
    private static final Logger LOG = LoggerFactory.getLogger(DataSession.class);

    private DataAttach() {
    }

    /**
     * Reads and answers the attach on {@code peer}: the session it attached to, or null if it was refused (the
     * client has been told why). {@code attached} runs once the session took the connection, before the answer.
     */
    static Sessions.Session attach(Communicator peer, Sessions sessions, Runnable attached) throws IOException {
        ByteBuffer hello = ByteBuffer.allocate(DataWire.ATTACH_BYTES);
        peer.readFully(hello);
        hello.flip();
        int magic = hello.getInt();
        short version = hello.getShort();
        if (magic != DataWire.MAGIC || version != DataWire.VERSION) {
            refuseAttach(peer, KvException.Code.BAD_REQUEST, String.format("not a kv data connection: magic 0x%08x"
                    + " version %d, expected 0x%08x version %d", magic, version, DataWire.MAGIC, DataWire.VERSION));
            return null;
        }
        try {
            Sessions.Session s = sessions.attach(hello.getLong(), hello.getLong(), peer);
            attached.run();
            peer.write(ByteBuffer.allocate(3).put(DataWire.OK).putShort((short) 0).flip());
            peer.sync();
            return s;
        } catch (KvException e) {
            refuseAttach(peer, e.code(), e.getMessage());
            return null;
        }
    }

    private static void refuseAttach(Communicator peer, KvException.Code code, String message) throws IOException {
        LOG.info("data connection from {} refused: {}", peer.peerName(), message);
        byte[] text = message.getBytes(StandardCharsets.UTF_8);
        peer.write(ByteBuffer.allocate(3 + text.length).put((byte) code.wire()).putShort((short) text.length)
                .put(text).flip());
        peer.sync();
    }
}
