package io.rdmacomm.session;

import io.rdmacomm.api.Communicator;
import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

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

    /** A request for {@link Exchange#SEND} of a message of {@code length} bytes. */
    public static SessionRequest send(int length) {
        if (length < 0 || length > SessionProtocol.MAX_SEND_LENGTH) {
            throw new IllegalArgumentException("a message of " + length + " bytes; 0 to "
                    + SessionProtocol.MAX_SEND_LENGTH + " can be sent");
        }
        return new SessionRequest(Exchange.SEND, ByteBuffer.allocate(4).putInt(length).array());
    }

    /** A request for {@link Exchange#WRITE} of {@code totalBytes} bytes. */
    public static SessionRequest oneSidedWrite(long totalBytes) {
        if (totalBytes < 1) {
            throw new IllegalArgumentException("a write of at least 1 byte, got " + totalBytes);
        }
        return new SessionRequest(Exchange.WRITE, ByteBuffer.allocate(8).putLong(totalBytes).array());
    }

    /** A request for {@link Exchange#READ}. */
    public static SessionRequest oneSidedRead() {
        return new SessionRequest(Exchange.READ, new byte[0]);
    }

    /** A request for {@link Exchange#STATS}. */
    public static SessionRequest stats() {
        return new SessionRequest(Exchange.STATS, new byte[0]);
    }

    /** A request for {@link Exchange#CALL} of {@code routine} with an input of {@code inputLength} bytes. */
    public static SessionRequest call(String routine, int inputLength) {
        checkName("routine", routine);
        if (inputLength < 0 || inputLength > SessionProtocol.MAX_CALL_INPUT) {
            throw new IllegalArgumentException("a routine input of " + inputLength + " bytes; 0 to "
                    + SessionProtocol.MAX_CALL_INPUT + " can be sent");
        }
        byte[] name = routine.getBytes(StandardCharsets.US_ASCII);
        return new SessionRequest(Exchange.CALL, ByteBuffer.allocate(1 + name.length + 4).put((byte) name.length)
                .put(name).putInt(inputLength).array());
    }

    /** A request to join {@code group} of {@code members} clients for an all-to-all of {@code msgSize} bytes. */
    public static SessionRequest allToAll(String group, int members, int msgSize) {
        if (msgSize < 1 || msgSize > SessionProtocol.MAX_GROUP_MESSAGE) {
            throw new IllegalArgumentException("an all-to-all message size of " + msgSize + " bytes; 1 to "
                    + SessionProtocol.MAX_GROUP_MESSAGE + " are possible");
        }
        return group(Exchange.ALLTOALL, group, members, msgSize);
    }

    /**
     * A request to join {@code group} of {@code members} clients for a broadcast, offering a message of
     * {@code messageLength} bytes (0: none).
     */
    public static SessionRequest broadcast(String group, int members, int messageLength) {
        if (messageLength < 0 || messageLength > SessionProtocol.MAX_GROUP_MESSAGE) {
            throw new IllegalArgumentException("a broadcast message of " + messageLength + " bytes; 0 to "
                    + SessionProtocol.MAX_GROUP_MESSAGE + " are possible");
        }
        return group(Exchange.BROADCAST, group, members, messageLength);
    }

    private static SessionRequest group(Exchange exchange, String group, int members, int size) {
        checkName("group", group);
        if (members < 1 || members > 0xffff) {
            throw new IllegalArgumentException("a group of 1 to 65535 members, got " + members);
        }
        byte[] name = group.getBytes(StandardCharsets.US_ASCII);
        return new SessionRequest(exchange, ByteBuffer.allocate(1 + name.length + 2 + 4).put((byte) name.length)
                .put(name).putShort((short) members).putInt(size).array());
    }

    private static void checkName(String what, String name) {
        if (!SessionProtocol.isValidName(name)) {
            throw new IllegalArgumentException("invalid " + what + " name '" + name + "': 1 to "
                    + SessionProtocol.MAX_NAME_LENGTH + " letters, digits, '.', '_' or '-'");
        }
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

    /** The message length a {@link Exchange#SEND} request announces. */
    public int sendLength() {
        expect(Exchange.SEND);
        return params().getInt(0);
    }

    /** The byte count a {@link Exchange#WRITE} request announces. */
    public long writeTotal() {
        expect(Exchange.WRITE);
        return params().getLong(0);
    }

    /** The routine a {@link Exchange#CALL} request names. */
    public String routine() {
        expect(Exchange.CALL);
        return name();
    }

    /** The input length a {@link Exchange#CALL} request announces. */
    public int inputLength() {
        expect(Exchange.CALL);
        return params().getInt(1 + params[0]);
    }

    /** The group a group exchange ({@link Exchange#ALLTOALL}, {@link Exchange#BROADCAST}) names. */
    public String group() {
        expectGroup();
        return name();
    }

    /** The member count a group exchange announces. */
    public int members() {
        expectGroup();
        return Short.toUnsignedInt(params().getShort(1 + params[0]));
    }

    /** The all-to-all message size, or the length of the broadcast message offered (0: none). */
    public int groupMessageSize() {
        expectGroup();
        return params().getInt(1 + params[0] + 2);
    }

    private String name() {
        return new String(params, 1, params[0], StandardCharsets.US_ASCII);
    }

    private void expect(Exchange e) {
        if (exchange != e) {
            throw new IllegalStateException("a " + exchange + " request is not a " + e + " request");
        }
    }

    private void expectGroup() {
        if (exchange != Exchange.ALLTOALL && exchange != Exchange.BROADCAST) {
            throw new IllegalStateException("a " + exchange + " request names no group");
        }
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
        if (!exchange.acceptsParamsLength(length)) {
            throw new SessionException(SessionStatus.BAD_PARAMETERS, exchange + " takes "
                    + exchange.paramsLengthText() + " of parameters, got " + length);
        }
        SessionRequest request = new SessionRequest(exchange, params.array());
        request.validate();
        return request;
    }

    /** Checks the parameters' values: the lengths they announce, names, counts. */
    private void validate() throws SessionException {
        switch (exchange) {
            case SINK -> {
                if (sinkTotal() < 0) {
                    throw bad("SINK total " + Long.toUnsignedString(sinkTotal()) + " is too large");
                }
            }
            case SEND -> {
                long n = Integer.toUnsignedLong(sendLength());
                if (n > SessionProtocol.MAX_SEND_LENGTH) {
                    throw new SessionException(SessionStatus.REQUEST_TOO_LARGE, "SEND of a " + n
                            + "-byte message exceeds the limit of " + SessionProtocol.MAX_SEND_LENGTH + " bytes");
                }
            }
            case WRITE -> {
                if (writeTotal() < 1) {
                    throw bad("WRITE total " + Long.toUnsignedString(writeTotal()) + " is not between 1 and "
                            + Long.MAX_VALUE);
                }
            }
            case CALL -> {
                checkNamed("routine", 4);
                long n = Integer.toUnsignedLong(inputLength());
                if (n > SessionProtocol.MAX_CALL_INPUT) {
                    throw new SessionException(SessionStatus.REQUEST_TOO_LARGE, "CALL input of " + n
                            + " bytes exceeds the limit of " + SessionProtocol.MAX_CALL_INPUT + " bytes");
                }
            }
            case ALLTOALL, BROADCAST -> {
                checkNamed("group", 6);
                if (members() < 1) {
                    throw bad(exchange + " group '" + group() + "' announces 0 members; at least 1 is needed");
                }
                long n = Integer.toUnsignedLong(groupMessageSize());
                long min = exchange == Exchange.ALLTOALL ? 1 : 0;
                if (n < min || n > SessionProtocol.MAX_GROUP_MESSAGE) {
                    throw new SessionException(n > SessionProtocol.MAX_GROUP_MESSAGE
                            ? SessionStatus.REQUEST_TOO_LARGE : SessionStatus.BAD_PARAMETERS, exchange
                            + " message of " + n + " bytes is outside " + min + " to "
                            + SessionProtocol.MAX_GROUP_MESSAGE + " bytes");
                }
            }
            default -> {
                // ECHO, READ and STATS take no parameters; their length was checked already
            }
        }
    }

    /** Checks that the name field's length fits the block exactly with {@code after} bytes after it. */
    private void checkNamed(String what, int after) throws SessionException {
        int n = Byte.toUnsignedInt(params[0]);
        if (1 + n + after != params.length) {
            throw bad(exchange + " " + what + " name of " + n + " bytes does not fit a parameter block of "
                    + params.length + " bytes");
        }
        String name = name();
        if (!SessionProtocol.isValidName(name)) {
            throw bad(exchange + " " + what + " name '" + name + "' is invalid: 1 to "
                    + SessionProtocol.MAX_NAME_LENGTH + " letters, digits, '.', '_' or '-'");
        }
    }

    private static SessionException bad(String message) {
        return new SessionException(SessionStatus.BAD_PARAMETERS, message);
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
        return switch (exchange) {
            case SINK -> "SINK of " + sinkTotal() + " bytes";
            case SEND -> "SEND of " + sendLength() + " bytes";
            case WRITE -> "WRITE of " + writeTotal() + " bytes";
            case CALL -> "CALL of '" + routine() + "' with " + inputLength() + " bytes of input";
            case ALLTOALL -> "ALLTOALL in group '" + group() + "' of " + members() + " members, "
                    + groupMessageSize() + " bytes each";
            case BROADCAST -> "BROADCAST in group '" + group() + "' of " + members() + " members, offering "
                    + groupMessageSize() + " bytes";
            default -> exchange.toString();
        };
    }
}
