package io.rdmacomm.tcp;

import io.rdmacomm.api.CommunicatorException;
import io.rdmacomm.api.HandshakeException;
import io.rdmacomm.api.auth.AuthenticationException;
import io.rdmacomm.api.auth.MutualAuthentication;
import io.rdmacomm.api.auth.SharedSecret;
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
 *        6  u16 client to server: flags (bit 0: the client has a shared secret; others reserved, 0);
 *               server to client: status (0 ok, 1 version refused, 2 authentication required, 3 no secret here)
 * </pre>
 *
 * The client speaks first; the server answers with its own version and a status and hangs up unless the status is
 * ok. When both have a shared secret, the three messages of {@link MutualAuthentication} follow (the challenge in
 * the same write as the server's answer); a server with a secret refuses a client without one (status 2), and a
 * server without one a client that has one (status 3), so neither side believes it is protected when it is not.
 * Frames ({@link Wire}) follow. Someone who speaks another protocol is told what arrived, in hex.
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
    static final short STATUS_AUTH_REQUIRED = 2;
    static final short STATUS_NO_SECRET = 3;
    static final short FLAG_AUTH = 1;

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
    static CommunicatorException checkServerReply(ByteBuffer b, int n, String where) {
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
        if (status == STATUS_AUTH_REQUIRED) {
            return new AuthenticationException(where + " requires authentication: give this endpoint the server's"
                    + " shared secret (secretFile= or secretEnv=)");
        }
        if (status == STATUS_NO_SECRET) {
            return new AuthenticationException(where + " has no shared secret, so it cannot prove who it is;"
                    + " not connecting (give the server the secret too, or drop secretFile/secretEnv here)");
        }
        if (status != STATUS_OK) {
            return new HandshakeException(where + " answered the handshake with unknown status " + status);
        }
        return null;
    }

    /**
     * The server's side of one peer's handshake on a non-blocking channel, advanced whenever the channel is
     * readable; garbage is refused as soon as it cannot be our magic number. With a shared secret, the peer's
     * authentication proof is read the same way after the challenge went out.
     */
    static final class Accepting {
        final long deadline;
        final String peer;
        private final SharedSecret secret;
        private ByteBuffer in = ByteBuffer.allocate(LENGTH);
        private MutualAuthentication.Server auth;

        /** @param secret the server's shared secret, or null when it authenticates nobody */
        Accepting(long deadline, String peer, SharedSecret secret) {
            this.deadline = deadline;
            this.peer = peer;
            this.secret = secret;
        }

        /**
         * Reads what the peer sent; once the handshake (and authentication) is complete, answers it.
         *
         * @return whether the peer is accepted (and answered); false while bytes are missing
         * @throws IOException if the peer is refused (it was answered where it spoke our protocol) or went away
         */
        boolean advance(SocketChannel c) throws IOException {
            int n = c.read(in);
            int have = in.position();
            if (auth == null && !magicPrefixMatches(in, have)) {
                throw badMagic(in, have, "peer " + peer);
            }
            if (n < 0) {
                throw new HandshakeException("peer " + peer + " closed the connection during the handshake after "
                        + received());
            }
            if (in.hasRemaining()) {
                return false;
            }
            if (auth != null) {
                send(c, ByteBuffer.wrap(auth.answer(in.array())));
                auth.checkAccepted();
                return true;
            }
            HandshakeException refused = checkClientHello(in, peer);
            boolean offersAuth = (in.getShort(FLAGS_OFFSET) & FLAG_AUTH) != 0;
            short status = refused != null ? STATUS_VERSION_REFUSED
                    : secret != null && !offersAuth ? STATUS_AUTH_REQUIRED
                    : secret == null && offersAuth ? STATUS_NO_SECRET : STATUS_OK;
            ByteBuffer reply = encode(status);
            if (status == STATUS_OK && secret != null) {
                auth = new MutualAuthentication.Server(secret, peer);
                reply = ByteBuffer.allocate(LENGTH + MutualAuthentication.CHALLENGE_BYTES).put(reply)
                        .put(auth.challenge()).flip();
            }
            send(c, reply);
            if (refused != null) {
                throw refused;
            }
            if (status == STATUS_AUTH_REQUIRED) {
                throw new AuthenticationException("peer " + peer + " offered no authentication; this server"
                        + " requires its shared secret");
            }
            if (status == STATUS_NO_SECRET) {
                throw new AuthenticationException("peer " + peer + " offered authentication, but this server has"
                        + " no shared secret (secretFile/secretEnv)");
            }
            if (auth != null) {
                in = ByteBuffer.allocate(MutualAuthentication.PROOF_BYTES);
                return false;
            }
            return true;
        }

        /** Sends a reply of at most a few dozen bytes: a fresh socket's send buffer always takes it. */
        private static void send(SocketChannel c, ByteBuffer reply) throws IOException {
            c.write(reply);
            if (reply.hasRemaining()) {
                throw new IOException("could not send the handshake reply");
            }
        }

        /** What arrived so far, for the message when the peer stays silent or goes away. */
        String received() {
            int have = in.position();
            return auth == null ? have + " of " + LENGTH + " bytes: " + hex(in, have)
                    : have + " of " + MutualAuthentication.PROOF_BYTES + " bytes of its authentication proof";
        }
    }
}
