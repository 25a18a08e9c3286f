package io.rdmacomm.bench;

import io.rdmacomm.api.HandshakeException;
import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.Optional;

/**
 * The few bytes the raw NIO baseline exchanges before measuring, so that a raw client never measures against
 * something else. Big-endian:
 *
 * <pre>
 * hello   int magic 0x52424E48 ("RBNH") | short version | short kind | long sink total (0 for echo kinds)
 * answer  int magic 0x52424E41 ("RBNA") | int status (0 = accepted)
 * sink ack                                long bytes received
 * </pre>
 */
final class RawProtocol {
    static final int HELLO_MAGIC = 0x52424E48;
    static final int ANSWER_MAGIC = 0x52424E41;
    static final int VERSION = 1;
    static final int HELLO_LENGTH = 16;
    static final int ANSWER_LENGTH = 8;
    static final int STATUS_OK = 0;
    static final int STATUS_REFUSED = 1;

    private RawProtocol() {
    }

    /** What a raw client asks the raw server for. */
    enum Kind {
        /** Echo with a blocking socket on the server side too. */
        ECHO_BLOCKING(1),
        /** Echo with the server spinning on a non-blocking socket, as the client does. */
        ECHO_BUSY_POLL(2),
        /** Read the announced number of bytes, then acknowledge the count. */
        SINK(3);

        final int id;

        Kind(int id) {
            this.id = id;
        }

        static Optional<Kind> byId(int id) {
            for (Kind k : values()) {
                if (k.id == id) {
                    return Optional.of(k);
                }
            }
            return Optional.empty();
        }
    }

    static ByteBuffer hello(Kind kind, long sinkTotal) {
        return ByteBuffer.allocate(HELLO_LENGTH).putInt(HELLO_MAGIC).putShort((short) VERSION)
                .putShort((short) kind.id).putLong(sinkTotal).flip();
    }

    static ByteBuffer answer(int status) {
        return ByteBuffer.allocate(ANSWER_LENGTH).putInt(ANSWER_MAGIC).putInt(status).flip();
    }

    /** Sends the hello on a blocking channel and checks the server's answer. */
    static void greet(SocketChannel ch, Kind kind, long sinkTotal, String peer) throws IOException {
        writeFully(ch, hello(kind, sinkTotal));
        ByteBuffer a = ByteBuffer.allocate(ANSWER_LENGTH);
        readFully(ch, a, peer);
        a.flip();
        int magic = a.getInt();
        if (magic != ANSWER_MAGIC) {
            throw new HandshakeException(String.format("%s is not a raw baseline server: expected answer magic"
                    + " 0x%08x, got 0x%08x (start it with 'bench/baseline raw-serve')", peer, ANSWER_MAGIC, magic));
        }
        int status = a.getInt();
        if (status != STATUS_OK) {
            throw new HandshakeException(peer + " refused the raw " + kind + " run (status " + status + ")");
        }
    }

    static void writeFully(SocketChannel ch, ByteBuffer src) throws IOException {
        while (src.hasRemaining()) {
            ch.write(src);
        }
    }

    static void readFully(SocketChannel ch, ByteBuffer dst, String peer) throws IOException {
        int wanted = dst.remaining();
        while (dst.hasRemaining()) {
            if (ch.read(dst) < 0) {
                throw new EOFException("end of stream from " + peer + " after " + (wanted - dst.remaining())
                        + " of " + wanted + " bytes");
            }
        }
    }
}
