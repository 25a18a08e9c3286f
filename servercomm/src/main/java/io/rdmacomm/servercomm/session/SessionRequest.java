package io.rdmacomm.servercomm.session;

import io.rdmacomm.api.Communicator;
import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;

/** What a client asks of the server at the start of a session: an exchange and its parameters. Immutable. */
public final class SessionRequest {
    private final Exchange exchange;
    private final byte[] params;

    private SessionRequest(Exchange exchange, byte[] params) {
        this.exchange = exchange;
        this.params = params;
    }

    /** A request for {@link Exchange#ECHO}. */
    public static SessionRequest echo() {
        return new SessionRequest(Exchange.ECHO, new byte[0]);
    }

    /** A request for {@link Exchange#SINK} of {@code totalBytes} bytes. */
    public static SessionRequest sink(long totalBytes) {
        if (totalBytes < 0) {
            throw new IllegalArgumentException("sink total must not be negative, got " + totalBytes);
        }
        return new SessionRequest(Exchange.SINK, ByteBuffer.allocate(8).putLong(totalBytes).array());
    }

    public Exchange exchange() {
        return exchange;
    }

    /** The parameters as a read-only big-endian buffer. */
    public ByteBuffer params() {
        return ByteBuffer.wrap(params).asReadOnlyBuffer();
    }

    /** The byte count a {@link Exchange#SINK} request announces. */
    public long sinkTotal() {
        if (exchange != Exchange.SINK) {
            throw new IllegalStateException("a " + exchange + " request has no sink total");
        }
        return params().getLong(0);
    }

    /** The request as it goes on the wire. */
    public ByteBuffer encode() {
        return ByteBuffer.allocate(SessionProtocol.REQUEST_HEADER_LENGTH + params.length)
                .putInt(SessionProtocol.REQUEST_MAGIC)
                .putShort((short) SessionProtocol.VERSION)
                .putShort((short) exchange.id())
                .putInt(params.length)
                .put(params)
                .flip();
    }

    /**
     * Reads and validates a request as the server does.
     *
     * @throws SessionException with the status to answer if the request is malformed, truncated, too large,
     *     of another version or for an unknown exchange
     * @throws IOException if the connection fails
     */
    public static SessionRequest read(Communicator peer) throws IOException {
        ByteBuffer header = ByteBuffer.allocate(SessionProtocol.REQUEST_HEADER_LENGTH);
        readOrTruncated(peer, header, "header");
        header.flip();
        int magic = header.getInt();
        if (magic != SessionProtocol.REQUEST_MAGIC) {
            throw new SessionException(SessionStatus.BAD_MAGIC, "expected a session request (magic "
                    + SessionProtocol.hex(SessionProtocol.REQUEST_MAGIC) + "), got " + SessionProtocol.hex(magic));
        }
        int version = Short.toUnsignedInt(header.getShort());
        if (version != SessionProtocol.VERSION) {
            throw new SessionException(SessionStatus.BAD_VERSION, "session protocol version " + version
                    + " is not supported; this server speaks version " + SessionProtocol.VERSION);
        }
        int id = Short.toUnsignedInt(header.getShort());
        int length = header.getInt();
        if (length < 0 || length > SessionProtocol.MAX_PARAMS_LENGTH) {
            throw new SessionException(SessionStatus.REQUEST_TOO_LARGE, "request parameters of "
                    + Integer.toUnsignedString(length) + " bytes exceed the limit of "
                    + SessionProtocol.MAX_PARAMS_LENGTH);
        }
        ByteBuffer params = ByteBuffer.allocate(length);
        readOrTruncated(peer, params, "parameters");
        Exchange exchange = Exchange.byId(id).orElseThrow(() -> new SessionException(
                SessionStatus.UNKNOWN_EXCHANGE, "unknown exchange id " + id + "; known: " + knownExchanges()));
        if (length != exchange.paramsLength()) {
            throw new SessionException(SessionStatus.BAD_PARAMETERS, exchange + " takes "
                    + exchange.paramsLength() + " bytes of parameters, got " + length);
        }
        SessionRequest request = new SessionRequest(exchange, params.array());
        if (exchange == Exchange.SINK && request.sinkTotal() < 0) {
            throw new SessionException(SessionStatus.BAD_PARAMETERS, "SINK total "
                    + Long.toUnsignedString(request.sinkTotal()) + " is too large");
        }
        return request;
    }

    private static void readOrTruncated(Communicator peer, ByteBuffer dst, String part) throws IOException {
        int wanted = dst.remaining();
        try {
            peer.readFully(dst);
        } catch (EOFException e) {
            throw new SessionException(SessionStatus.TRUNCATED, "session request " + part + " truncated: "
                    + (wanted - dst.remaining()) + " of " + wanted + " bytes arrived before the stream ended");
        }
    }

    private static String knownExchanges() {
        StringBuilder sb = new StringBuilder();
        for (Exchange e : Exchange.values()) {
            sb.append(sb.length() == 0 ? "" : ", ").append(e).append('=').append(e.id());
        }
        return sb.toString();
    }

    @Override
    public String toString() {
        return exchange == Exchange.SINK ? "SINK of " + sinkTotal() + " bytes" : exchange.toString();
    }
}
