package io.rdmacomm.tcp;

import io.rdmacomm.api.HandshakeException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.HexFormat;

/**
 * The first bytes each way on a {@code tcp://} connection, big-endian, in the same layout both ways:
 *
 * <pre>
 * offset 0  u32 magic 0x52444354 ('RDCT')
 *        4  u16 protocol version
 *        6  u16 client to server: flags (reserved, 0); server to client: status (0 ok, 1 version refused)
 * </pre>
 *
 * The client speaks first; the server answers with its own version and a status and hangs up unless the status is
 * ok. Frames ({@link Wire}) follow. Someone who speaks another protocol is told what arrived, in hex.
 */
final class Handshake {
    static final int MAGIC = 0x52444354;
    static final short VERSION = 1;
    static final int MAGIC_OFFSET = 0;
    static final int VERSION_OFFSET = 4;
    static final int FLAGS_OFFSET = 6;
    static final int LENGTH = 8;
    static final short NO_FLAGS = 0;
    static final short STATUS_OK = 0;
    static final short STATUS_VERSION_REFUSED = 1;

    private Handshake() {
    }

    /** A handshake ready to send: our magic and version, then {@code flagsOrStatus}. */
    static ByteBuffer encode(short flagsOrStatus) {
        ByteBuffer b = ByteBuffer.allocate(LENGTH);
        b.putInt(MAGIC_OFFSET, MAGIC).putShort(VERSION_OFFSET, VERSION).putShort(FLAGS_OFFSET, flagsOrStatus);
        return b;
    }

    /** Whether bytes {@code 0..n} of {@code b} (absolute) can still be the start of our magic number. */
    static boolean magicPrefixMatches(ByteBuffer b, int n) {
        for (int i = 0; i < Math.min(n, 4); i++) {
            if (b.get(MAGIC_OFFSET + i) != (byte) (MAGIC >>> (24 - 8 * i))) {
                return false;
            }
        }
        return true;
    }

    /** The first bytes (absolute {@code 0..n}) in hex, for messages about what a peer sent. */
    static String hex(ByteBuffer b, int n) {
        byte[] bytes = new byte[Math.min(n, 32)];
        for (int i = 0; i < bytes.length; i++) {
            bytes[i] = b.get(i);
        }
        return n == 0 ? "nothing" : HexFormat.ofDelimiter(" ").formatHex(bytes) + (n > bytes.length ? " …" : "");
    }

    /** The peer's first {@code n} bytes (absolute) are not our handshake. */
    static HandshakeException badMagic(ByteBuffer b, int n, String who) {
        return new HandshakeException(who + " does not speak the rdmacomm tcp protocol: expected a handshake"
                + " starting 52 44 43 54 ('RDCT'), got " + hex(b, n));
    }

    /**
     * Validates a complete client handshake (absolute bytes 0..7 of {@code b}).
     *
     * @return null if acceptable, else why not
     */
    static HandshakeException checkClientHello(ByteBuffer b, String peer) {
        if (b.getInt(MAGIC_OFFSET) != MAGIC) {
            return badMagic(b, LENGTH, "peer " + peer);
        }
        short version = b.getShort(VERSION_OFFSET);
        if (version != VERSION) {
            return new HandshakeException("peer " + peer + " speaks rdmacomm tcp protocol version " + version
                    + ", this server speaks version " + VERSION);
        }
        return null;
    }

    /**
     * Validates the server's answer, of which {@code n} bytes arrived before it was complete or the stream ended.
     *
     * @return null if the server accepted us, else why not
     */
    static HandshakeException checkServerReply(ByteBuffer b, int n, String where) {
        if (!magicPrefixMatches(b, n)) {
            return badMagic(b, n, where);
        }
        if (n < LENGTH) {
            return new HandshakeException(where + " closed the connection during the handshake after " + n
                    + " of " + LENGTH + " bytes: " + hex(b, n));
        }
        short version = b.getShort(VERSION_OFFSET);
        short status = b.getShort(FLAGS_OFFSET);
        if (status == STATUS_VERSION_REFUSED || version != VERSION) {
            return new HandshakeException(where + " speaks rdmacomm tcp protocol version " + version
                    + " and refused version " + VERSION);
        }
        if (status != STATUS_OK) {
            return new HandshakeException(where + " answered the handshake with unknown status " + status);
        }
        return null;
    }

    /**
     * The server's side of one peer's handshake on a non-blocking channel, advanced whenever the channel is
     * readable; garbage is refused as soon as it cannot be our magic number.
     */
    static final class Accepting {
        final long deadline;
        final String peer;
        private final ByteBuffer in = ByteBuffer.allocate(LENGTH);

        Accepting(long deadline, String peer) {
            this.deadline = deadline;
            this.peer = peer;
        }

        /**
         * Reads what the peer sent; once the handshake is complete, answers it.
         *
         * @return whether the peer is accepted (and answered); false while bytes are missing
         * @throws IOException if the peer is refused (it was answered where it spoke our protocol) or went away
         */
        boolean advance(SocketChannel c) throws IOException {
            int n = c.read(in);
            int have = in.position();
            if (!magicPrefixMatches(in, have)) {
                throw badMagic(in, have, "peer " + peer);
            }
            if (n < 0) {
                throw new HandshakeException("peer " + peer + " closed the connection during the handshake after "
                        + have + " of " + LENGTH + " bytes: " + hex(in, have));
            }
            if (in.hasRemaining()) {
                return false;
            }
            HandshakeException refused = checkClientHello(in, peer);
            ByteBuffer reply = encode(refused == null ? STATUS_OK : STATUS_VERSION_REFUSED);
            c.write(reply); // a fresh socket's send buffer always takes 8 bytes
            if (refused != null) {
                throw refused;
            }
            if (reply.hasRemaining()) {
                throw new IOException("could not send the handshake reply");
            }
            return true;
        }

        /** What arrived so far, in hex, for the message when the peer stays silent. */
        String received() {
            return hex(in, in.position());
        }
    }
}
