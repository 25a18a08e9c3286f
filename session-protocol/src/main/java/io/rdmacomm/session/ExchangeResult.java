package io.rdmacomm.session;

import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.CommunicatorException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * What the server tells a client inside an exchange (an advertised descriptor, an acknowledgement, a checksum,
 * a group's formation) or how the exchange ended early: a status, a message for people and a body whose layout
 * the exchange defines. A status other than {@link SessionStatus#OK} ends the session. Immutable.
 */
public final class ExchangeResult {
    static final int HEADER_LENGTH = 10;

    private final SessionStatus status;
    private final String message;
    private final byte[] body;

    private ExchangeResult(SessionStatus status, String message, byte[] body) {
        if (body.length > SessionProtocol.MAX_RESULT_BODY) {
            throw new IllegalArgumentException("result body of " + body.length + " bytes exceeds "
                    + SessionProtocol.MAX_RESULT_BODY);
        }
        this.status = status;
        this.message = message;
        this.body = body;
    }

    /** A successful step of an exchange carrying {@code body} (its remaining bytes). */
    public static ExchangeResult ok(ByteBuffer body) {
        byte[] b = new byte[body.remaining()];
        body.duplicate().get(b);
        return new ExchangeResult(SessionStatus.OK, "", b);
    }

    /** A step that succeeded as far as the protocol goes, with a message for people, such as a routine's refusal. */
    public static ExchangeResult okWithMessage(String message, ByteBuffer body) {
        byte[] b = new byte[body.remaining()];
        body.duplicate().get(b);
        return new ExchangeResult(SessionStatus.OK, message, b);
    }

    /** An exchange that ended with {@code status} for the reason {@code message}. */
    public static ExchangeResult error(SessionStatus status, String message) {
        if (status == SessionStatus.OK) {
            throw new IllegalArgumentException("an error result needs a status other than OK");
        }
        return new ExchangeResult(status, message, new byte[0]);
    }

    public SessionStatus status() {
        return status;
    }

    public String message() {
        return message;
    }

    /** The body as a read-only big-endian buffer. */
    public ByteBuffer body() {
        return ByteBuffer.wrap(body).asReadOnlyBuffer();
    }

    /** The result as it goes on the wire; the message is cut to {@link SessionProtocol#MAX_MESSAGE_LENGTH}
     * bytes, at a character boundary. */
    public ByteBuffer encode() {
        byte[] text = SessionProtocol.messageBytes(message);
        return ByteBuffer.allocate(HEADER_LENGTH + text.length + 4 + body.length)
                .putInt(SessionProtocol.RESULT_MAGIC)
                .putShort((short) SessionProtocol.VERSION)
                .putShort((short) status.code())
                .putShort((short) text.length)
                .put(text)
                .putInt(body.length)
                .put(body)
                .flip();
    }

    /** Writes this result to {@code peer} and syncs it. */
    public void send(Communicator peer) throws IOException {
        peer.write(encode());
        peer.sync();
    }

    /**
     * Reads a result as the client does.
     *
     * @throws CommunicatorException if something else arrives, or a result of another version, or one whose
     *     lengths exceed the protocol's limits
     * @throws java.io.EOFException if the stream ends first
     */
    public static ExchangeResult read(Communicator peer) throws IOException {
        ByteBuffer header = ByteBuffer.allocate(HEADER_LENGTH);
        peer.readFully(header);
        header.flip();
        int magic = header.getInt();
        if (magic != SessionProtocol.RESULT_MAGIC) {
            throw new CommunicatorException("expected an exchange result (magic "
                    + SessionProtocol.hex(SessionProtocol.RESULT_MAGIC) + ") from " + peer.peerName() + ", got "
                    + SessionProtocol.hex(magic));
        }
        int version = Short.toUnsignedInt(header.getShort());
        if (version != SessionProtocol.VERSION) {
            throw new CommunicatorException("exchange result from " + peer.peerName() + " has protocol version "
                    + version + ", expected " + SessionProtocol.VERSION);
        }
        int code = Short.toUnsignedInt(header.getShort());
        SessionStatus status = SessionStatus.byCode(code).orElseThrow(() -> new CommunicatorException(
                "exchange result from " + peer.peerName() + " has unknown status code " + code));
        int length = Short.toUnsignedInt(header.getShort());
        if (length > SessionProtocol.MAX_MESSAGE_LENGTH) {
            throw new CommunicatorException("exchange result from " + peer.peerName() + " announces a message of "
                    + length + " bytes, more than the limit of " + SessionProtocol.MAX_MESSAGE_LENGTH);
        }
        ByteBuffer text = ByteBuffer.allocate(length);
        peer.readFully(text);
        ByteBuffer bodyLength = ByteBuffer.allocate(4);
        peer.readFully(bodyLength);
        int n = bodyLength.getInt(0);
        if (n < 0 || n > SessionProtocol.MAX_RESULT_BODY) {
            throw new CommunicatorException("exchange result from " + peer.peerName() + " announces a body of "
                    + Integer.toUnsignedString(n) + " bytes, more than the limit of " + SessionProtocol.MAX_RESULT_BODY);
        }
        ByteBuffer body = ByteBuffer.allocate(n);
        peer.readFully(body);
        return new ExchangeResult(status, new String(text.array(), StandardCharsets.UTF_8), body.array());
    }

    /**
     * Reads a result and returns it if it is OK.
     *
     * @throws SessionException carrying the server's status and message otherwise, prefixed with {@code what}
     */
    public static ExchangeResult expectOk(Communicator peer, String what) throws IOException {
        ExchangeResult r = read(peer);
        if (r.status != SessionStatus.OK) {
            throw new SessionException(r.status, what + ": " + r.status + ": " + r.message);
        }
        return r;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ExchangeResult r && r.status == status && r.message.equals(message)
                && Arrays.equals(r.body, body);
    }

    @Override
    public int hashCode() {
        return status.hashCode() * 31 + message.hashCode() * 17 + Arrays.hashCode(body);
    }

    @Override
    public String toString() {
        return status + (message.isEmpty() ? "" : ": " + message) + " (" + body.length + "-byte body)";
    }
}
