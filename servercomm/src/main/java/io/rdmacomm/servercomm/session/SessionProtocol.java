package io.rdmacomm.servercomm.session;

import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.CommunicatorException;
import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * Wire constants of the session protocol and the frames shared by both sides. Every integer is big-endian.
 *
 * <pre>
 * request      int magic 0x52435351 ("RCSQ") | short version | short exchange id | int params length | params
 * reply        int magic 0x52435352 ("RCSR") | short version | short status code | short message length
 *              | message (UTF-8)
 * sink ack     int magic 0x52435341 ("RCSA") | long bytes received
 * </pre>
 */
public final class SessionProtocol {
    /** "RCSQ": the first bytes a client sends after connecting. */
    public static final int REQUEST_MAGIC = 0x52435351;
    /** "RCSR": the first bytes of the server's answer to a request. */
    public static final int REPLY_MAGIC = 0x52435352;
    /** "RCSA": the first bytes of a {@link Exchange#SINK} acknowledgement. */
    public static final int SINK_ACK_MAGIC = 0x52435341;
    public static final int VERSION = 1;
    /** The largest parameter block a server accepts; a larger announced length is refused unread. */
    public static final int MAX_PARAMS_LENGTH = 4096;
    /** The longest reply message in UTF-8 bytes; longer messages are cut. */
    public static final int MAX_MESSAGE_LENGTH = 1024;

    static final int REQUEST_HEADER_LENGTH = 12;
    static final int REPLY_HEADER_LENGTH = 10;
    static final int SINK_ACK_LENGTH = 12;

    private SessionProtocol() {
    }

    /** Writes a sink acknowledgement for {@code received} bytes and syncs it. */
    public static void writeSinkAck(Communicator peer, long received) throws IOException {
        ByteBuffer ack = ByteBuffer.allocate(SINK_ACK_LENGTH).putInt(SINK_ACK_MAGIC).putLong(received).flip();
        peer.write(ack);
        peer.sync();
    }

    /**
     * Reads a sink acknowledgement and returns the byte count the server received.
     *
     * @throws CommunicatorException if something else arrives
     * @throws java.io.EOFException if the stream ends first
     */
    public static long readSinkAck(Communicator peer) throws IOException {
        ByteBuffer magic = ByteBuffer.allocate(4);
        peer.readFully(magic);
        if (magic.getInt(0) != SINK_ACK_MAGIC) {
            throw new CommunicatorException("expected a sink acknowledgement (magic " + hex(SINK_ACK_MAGIC)
                    + ") from " + peer.peerName() + ", got " + hex(magic.getInt(0)));
        }
        ByteBuffer count = ByteBuffer.allocate(8);
        peer.readFully(count);
        return count.getLong(0);
    }

    static String hex(int value) {
        return String.format("0x%08x", value);
    }
}
