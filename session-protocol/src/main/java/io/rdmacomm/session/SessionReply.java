package io.rdmacomm.session;

import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.CommunicatorException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * The server's answer to a {@link SessionRequest}: a status and a message for people.
 *
 * @param status what the server decided
 * @param message why, empty for {@link SessionStatus#OK}
 */
public record SessionReply(SessionStatus status, String message) {

    /** The reply that starts an accepted session. */
    public static SessionReply ok() {
        return new SessionReply(SessionStatus.OK, "");
    }

    /** The reply as it goes on the wire; the message is cut to {@link SessionProtocol#MAX_MESSAGE_LENGTH}
     * bytes, at a character boundary. */
    public ByteBuffer encode() {
        byte[] text = SessionProtocol.messageBytes(message);
        return ByteBuffer.allocate(SessionProtocol.REPLY_HEADER_LENGTH + text.length)
                .putInt(SessionProtocol.REPLY_MAGIC)
                .putShort((short) SessionProtocol.VERSION)
                .putShort((short) status.code())
                .putShort((short) text.length)
                .put(text)
                .flip();
    }

    /**
     * Reads a reply as the client does.
     *
     * @throws CommunicatorException if the peer answers with something that is not a reply of this version
     * @throws java.io.EOFException if the stream ends first
     */
    public static SessionReply read(Communicator peer) throws IOException {
        ByteBuffer header = ByteBuffer.allocate(SessionProtocol.REPLY_HEADER_LENGTH);
        peer.readFully(header);
        header.flip();
        int magic = header.getInt();
        if (magic != SessionProtocol.REPLY_MAGIC) {
            throw new CommunicatorException("expected a session reply (magic "
                    + SessionProtocol.hex(SessionProtocol.REPLY_MAGIC) + ") from " + peer.peerName() + ", got "
                    + SessionProtocol.hex(magic) + ": is the peer a servercomm?");
        }
        int version = Short.toUnsignedInt(header.getShort());
        if (version != SessionProtocol.VERSION) {
            throw new CommunicatorException("session reply from " + peer.peerName() + " has protocol version "
                    + version + ", expected " + SessionProtocol.VERSION);
        }
        int code = Short.toUnsignedInt(header.getShort());
        int length = Short.toUnsignedInt(header.getShort());
        if (length > SessionProtocol.MAX_MESSAGE_LENGTH) {
            throw new CommunicatorException("session reply from " + peer.peerName() + " announces a message of "
                    + length + " bytes, more than the limit of " + SessionProtocol.MAX_MESSAGE_LENGTH);
        }
        SessionStatus status = SessionStatus.byCode(code).orElseThrow(() -> new CommunicatorException(
                "session reply from " + peer.peerName() + " has unknown status code " + code));
        ByteBuffer text = ByteBuffer.allocate(length);
        peer.readFully(text);
        return new SessionReply(status, new String(text.array(), StandardCharsets.UTF_8));
    }
}
