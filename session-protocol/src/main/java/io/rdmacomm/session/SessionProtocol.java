package io.rdmacomm.session;

import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.CommunicatorException;
import io.rdmacomm.api.support.Utf8;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.regex.Pattern;

/**
 * Wire constants of the session protocol and the frames shared by both sides. Every integer is big-endian.
 *
 * <pre>
 * request      int magic 0x52435351 ("RCSQ") | short version | short exchange id | int params length | params
 * reply        int magic 0x52435352 ("RCSR") | short version | short status code | short message length
 *              | message (UTF-8)
 * sink ack     int magic 0x52435341 ("RCSA") | long bytes received
 * result       int magic 0x52435358 ("RCSX") | short version | short status code | short message length
 *              | message (UTF-8) | int body length | body
 * write notify int magic 0x5243574e ("RCWN") | int chunk length
 * read done    int magic 0x52435244 ("RCRD")
 * </pre>
 *
 * <p>Parameters of the exchanges (names are ASCII {@code [A-Za-z0-9._-]}, at most {@link #MAX_NAME_LENGTH}):
 * <pre>
 * SEND       int message length (at most MAX_SEND_LENGTH); then the client sends the message
 * WRITE      long total bytes (at least 1)
 * READ       none
 * CALL       byte name length | routine name | int input length (at most MAX_CALL_INPUT); then the client
 *            sends short descriptor length | its output region's descriptor | the input
 * ALLTOALL   byte name length | group name | short members | int message size (1 to MAX_GROUP_MESSAGE)
 * BROADCAST  byte name length | group name | short members | int message length (0 to MAX_GROUP_MESSAGE);
 *            then the client sends its message, if any
 * STATS      none; the server answers with one result whose body is a {@link ServerStats}
 * </pre>
 */
public final class SessionProtocol {
    /** "RCSQ": the first bytes a client sends after connecting. */
    public static final int REQUEST_MAGIC = 0x52435351;
    /** "RCSR": the first bytes of the server's answer to a request. */
    public static final int REPLY_MAGIC = 0x52435352;
    /** "RCSA": the first bytes of a {@link Exchange#SINK} acknowledgement. */
    public static final int SINK_ACK_MAGIC = 0x52435341;
    /** "RCSX": the first bytes of an {@link ExchangeResult}. */
    public static final int RESULT_MAGIC = 0x52435358;
    /** "RCWN": the first bytes of the notification that follows each one-sided write of {@link Exchange#WRITE}. */
    public static final int WRITE_NOTIFY_MAGIC = 0x5243574e;
    /** "RCRD": a {@link Exchange#READ} client is done with the region. */
    public static final int READ_DONE_MAGIC = 0x52435244;
    public static final int VERSION = 1;
    /** The longest routine or group name. */
    public static final int MAX_NAME_LENGTH = 64;
    /** The largest message of {@link Exchange#SEND}. */
    public static final int MAX_SEND_LENGTH = 16 << 20;
    /** The largest routine input of {@link Exchange#CALL}. */
    public static final int MAX_CALL_INPUT = 16 << 20;
    /** The largest contribution or broadcast message of a group exchange. */
    public static final int MAX_GROUP_MESSAGE = 64 << 10;
    /** The largest body of an {@link ExchangeResult}: room for any region descriptor. */
    public static final int MAX_RESULT_BODY = 8192;
    /** The largest parameter block a server accepts; a larger announced length is refused unread. */
    public static final int MAX_PARAMS_LENGTH = 4096;
    /** The longest reply message in UTF-8 bytes; longer messages are cut, at a character boundary. */
    public static final int MAX_MESSAGE_LENGTH = 1024;

    static final int REQUEST_HEADER_LENGTH = 12;
    static final int REPLY_HEADER_LENGTH = 10;
    static final int SINK_ACK_LENGTH = 12;
    static final int WRITE_NOTIFY_LENGTH = 8;
    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9._-]{1," + MAX_NAME_LENGTH + "}");

    private SessionProtocol() {
    }

    /**
     * A reply or result message as it goes on the wire: UTF-8, cut to {@link #MAX_MESSAGE_LENGTH} bytes before the
     * character that does not fit whole, so the cut text is still UTF-8 (cutting inside a character would hand the
     * peer a broken one; found by {@code SessionReplyFuzzTest}).
     */
    static byte[] messageBytes(String message) {
        return Utf8.prefix(message, MAX_MESSAGE_LENGTH);
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

    /**
     * Byte {@code i} of the region {@link Exchange#READ} serves: {@code (i * 31 + 7) & 0xff}, so that every
     * offset has a predictable, non-repeating-looking value and a misplaced read shows.
     */
    public static byte patternByte(long i) {
        return (byte) ((i * 31 + 7) & 0xff);
    }

    /** Whether {@code name} can name a group or routine on the wire. */
    public static boolean isValidName(String name) {
        return name != null && NAME.matcher(name).matches();
    }

    /** Writes the notification that a one-sided write of {@code length} bytes has been placed, and syncs it. */
    public static void writeNotification(Communicator peer, int length) throws IOException {
        peer.write(ByteBuffer.allocate(WRITE_NOTIFY_LENGTH).putInt(WRITE_NOTIFY_MAGIC).putInt(length).flip());
        peer.sync();
    }

    /** Tells a {@link Exchange#READ} server that the client is done with its region, and syncs. */
    public static void writeReadDone(Communicator peer) throws IOException {
        peer.write(ByteBuffer.allocate(4).putInt(READ_DONE_MAGIC).flip());
        peer.sync();
    }

    static String hex(int value) {
        return String.format("0x%08x", value);
    }
}
