package io.rdmacomm.tcp;

import io.rdmacomm.api.CommunicatorException;
import io.rdmacomm.api.HandshakeException;
import io.rdmacomm.api.auth.AuthenticationException;
import io.rdmacomm.api.auth.MutualAuthentication;
import io.rdmacomm.api.auth.SharedSecret;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.util.HexFormat;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLException;

/**
 * The first bytes each way on a {@code tcp://} connection, big-endian, in the same layout both ways:
 *
 * <pre>
 * offset 0  u32 magic 0x52444354 ('RDCT')
 *        4  u16 protocol version
 *        6  u16 client to server: flags (bit 0: the client has a shared secret; bits 8-13: heartbeats, below;
 *               others reserved, 0);
 *               server to client: status in bits 0-7 (0 ok, 1 version refused, 2 authentication required, 3 no
 *               secret here, 4 no TLS here, 5 TLS required); bits 8-13: heartbeats, only in answer to a client that
 *               asked for them
 * </pre>
 *
 * Heartbeats (bits 8-13, code k): 0, what older peers send, means none; k &gt; 0 asks the peer to send a HEARTBEAT
 * frame ({@link Wire}) whenever it has sent nothing for 2^(k-1) ms, and promises to answer such a request. A side
 * asks only when its {@code liveness} is on, so heartbeats flow both ways exactly when both sides asked; otherwise
 * neither side sends any or expects any, and a peer of an older version is never failed for its silence.
 *
 * The client speaks first; the server answers with its own version and a status and hangs up unless the status is
 * ok. When both have a shared secret, the three messages of {@link MutualAuthentication} follow (the challenge in
 * the same write as the server's answer); a server with a secret refuses a client without one (status 2), and a
 * server without one a client that has one (status 3), so neither side believes it is protected when it is not.
 * Frames ({@link Wire}) follow. Someone who speaks another protocol is told what arrived, in hex.
 *
 * <p>With {@code tls=true} a TLS handshake ({@link TlsSession}) comes first and all of the above runs inside TLS.
 * A TLS server answers a plain handshake with status 5 in plain, and a plain server answers a TLS client hello
 * with status 4, so both kinds of client learn what is wrong; {@code handshakeTimeout} bounds the whole.
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
    static final short STATUS_NO_TLS = 4;
    static final short STATUS_TLS_REQUIRED = 5;
    static final short FLAG_AUTH = 1;
    static final int STATUS_MASK = 0xff;
    static final int HEARTBEAT_SHIFT = 8;
    static final int HEARTBEAT_MASK = 0x3f;
    /** The first byte of a TLS client hello (record type handshake). */
    static final byte TLS_HANDSHAKE_RECORD = 0x16;

    private Handshake() {
    }

    /** A handshake ready to send: our magic and version, then {@code flagsOrStatus}. */
    static ByteBuffer encode(short flagsOrStatus) {
        ByteBuffer b = ByteBuffer.allocate(LENGTH);
        b.putInt(MAGIC_OFFSET, MAGIC).putShort(VERSION_OFFSET, VERSION).putShort(FLAGS_OFFSET, flagsOrStatus);
        return b;
    }

    /** The heartbeat bits asking the peer for a heartbeat at least every {@code periodNanos} (0: none). */
    static short heartbeatBits(long periodNanos) {
        if (periodNanos <= 0) {
            return 0;
        }
        long millis = Math.max(1, TimeUnit.NANOSECONDS.toMillis(periodNanos));
        int code = Math.min(HEARTBEAT_MASK, 64 - Long.numberOfLeadingZeros(millis)); // 2^(code-1) <= millis
        return (short) (code << HEARTBEAT_SHIFT);
    }

    /** The heartbeat period a peer asked for in {@code field} (flags or status), in nanoseconds; 0: none. */
    static long heartbeatPeriod(short field) {
        int code = (field >>> HEARTBEAT_SHIFT) & HEARTBEAT_MASK;
        return code == 0 ? 0 : TimeUnit.MILLISECONDS.toNanos(1L << Math.min(code - 1, 40));
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
        if (n == 0) {
            return closedBeforeAnswering(where, null);
        }
        if (n < LENGTH) {
            return new HandshakeException(where + " closed the connection during the handshake after " + n
                    + " of " + LENGTH + " bytes: " + hex(b, n));
        }
        short version = b.getShort(VERSION_OFFSET);
        int status = b.getShort(FLAGS_OFFSET) & STATUS_MASK;
        if (status == STATUS_VERSION_REFUSED || version != VERSION) {
            return new HandshakeException(where + " speaks rdmacomm tcp protocol version " + version
                    + " and refused version " + VERSION);
        }
        if (status == STATUS_AUTH_REQUIRED) {
            return AuthenticationException.requiredBy(where);
        }
        if (status == STATUS_NO_SECRET) {
            return AuthenticationException.noSecretAt(where);
        }
        if (status == STATUS_TLS_REQUIRED) {
            return new HandshakeException(where + " requires TLS: add tls=true to this endpoint (and tlsTrust= the"
                    + " CA that signed the server's certificate, unless the JDK's default trust store has it)");
        }
        if (status != STATUS_OK) {
            return new HandshakeException(where + " answered the handshake with unknown status " + status);
        }
        return null;
    }

    /**
     * The server hung up (or reset the connection, {@code cause}) before it sent a byte of its answer: what a server
     * does to a peer it cannot take.
     */
    static HandshakeException closedBeforeAnswering(String where, Throwable cause) {
        return new HandshakeException(where + " closed the connection before answering the handshake (it may be at"
                + " its connection limit or out of file descriptors; try again later)"
                + (cause == null ? "" : ": " + cause.getMessage()), cause);
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
        private final short heartbeatBits;
        /** The peer's TLS session (null without TLS); it is part of what {@link TcpServer} hands over. */
        final TlsSession tls;
        private boolean tlsDone;
        private ByteBuffer in = ByteBuffer.allocate(LENGTH);
        private boolean heard;
        private long peerHeartbeat;
        private MutualAuthentication.Server auth;

        /**
         * @param secret the server's shared secret, or null when it authenticates nobody
         * @param tls a fresh TLS session for the peer, or null when this server does not use TLS
         * @param heartbeatBits what the server asks of clients that ask for heartbeats ({@link #heartbeatBits})
         */
        Accepting(long deadline, String peer, SharedSecret secret, TlsSession tls, short heartbeatBits) {
            this.deadline = deadline;
            this.peer = peer;
            this.secret = secret;
            this.tls = tls;
            this.heartbeatBits = heartbeatBits;
        }

        /**
         * Once accepted: the heartbeat period the client asked for, in nanoseconds; 0 when heartbeats are off on
         * this connection (either side did not ask).
         */
        long peerHeartbeat() {
            return peerHeartbeat;
        }

        /** Whether the peer sent anything yet: it is talking, not silent. */
        boolean heard() {
            return heard;
        }

        /**
         * Reads what the peer sent; once the handshake (and authentication) is complete, answers it. With TLS, the
         * TLS handshake goes first, and the key's interest follows what it waits for.
         *
         * @return whether the peer is accepted (and answered); false while bytes are missing
         * @throws IOException if the peer is refused (it was answered where it spoke our protocol) or went away
         */
        boolean advance(SelectionKey key) throws IOException {
            SocketChannel c = (SocketChannel) key.channel();
            if (tls != null && !tlsDone) {
                int wait;
                try {
                    wait = tls.handshake(c);
                } catch (SSLException e) {
                    throw tlsRefused(c, e);
                } finally {
                    heard |= tls.bytesRead() > 0;
                }
                if (wait != 0) {
                    key.interestOps(wait);
                    return false;
                }
                tlsDone = true;
                key.interestOps(SelectionKey.OP_READ);
            }
            int n = tls == null ? c.read(in) : tls.read(c, in);
            heard |= n > 0;
            int have = in.position();
            if (tls == null && auth == null && have > 0 && in.get(0) == TLS_HANDSHAKE_RECORD) {
                send(c, encode(STATUS_NO_TLS));
                throw new HandshakeException("peer " + peer + " began a TLS handshake, but this endpoint does not"
                        + " use TLS (tls=true)");
            }
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
            short flags = in.getShort(FLAGS_OFFSET);
            boolean offersAuth = (flags & FLAG_AUTH) != 0;
            short status = refused != null ? STATUS_VERSION_REFUSED
                    : secret != null && !offersAuth ? STATUS_AUTH_REQUIRED
                    : secret == null && offersAuth ? STATUS_NO_SECRET : STATUS_OK;
            if (status == STATUS_OK && heartbeatBits != 0 && heartbeatPeriod(flags) > 0) {
                peerHeartbeat = heartbeatPeriod(flags);
            }
            ByteBuffer reply = encode(peerHeartbeat > 0 ? (short) (status | heartbeatBits) : status);
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
                throw AuthenticationException.notOfferedBy(peer);
            }
            if (status == STATUS_NO_SECRET) {
                throw AuthenticationException.offeredWithoutSecret(peer);
            }
            if (auth != null) {
                in = ByteBuffer.allocate(MutualAuthentication.PROOF_BYTES);
                return false;
            }
            return true;
        }

        /** Sends a reply of at most a few dozen bytes: a fresh socket's send buffer always takes it. */
        private void send(SocketChannel c, ByteBuffer reply) throws IOException {
            boolean sent;
            if (tls == null) {
                c.write(reply);
                sent = !reply.hasRemaining();
            } else {
                tls.output().lock();
                try {
                    sent = tls.send(c, new ByteBuffer[] {reply});
                } finally {
                    tls.output().unlock();
                }
            }
            if (!sent) {
                throw new IOException("could not send the handshake reply");
            }
        }

        /** Why the TLS handshake failed; a peer that spoke our plain handshake is told, in plain, to use TLS. */
        private HandshakeException tlsRefused(SocketChannel c, SSLException e) {
            ByteBuffer got = tls.received();
            int have = got.remaining();
            if (have > 0 && got.position() == 0 && magicPrefixMatches(got, have)) {
                try {
                    c.write(encode(STATUS_TLS_REQUIRED));
                } catch (IOException ignored) {
                    // the peer went away; the refusal below says what happened
                }
                return new HandshakeException("peer " + peer + " speaks the plain rdmacomm tcp protocol, but this"
                        + " endpoint requires TLS");
            }
            return new HandshakeException("peer " + peer + ": " + TlsSession.explain(e, "the client's", "this server's"), e);
        }

        /** What arrived so far, for the message when the peer stays silent or goes away. */
        String received() {
            int have = in.position();
            if (tls != null && !tlsDone) {
                return "an incomplete TLS handshake";
            }
            return auth == null ? have + " of " + LENGTH + " bytes: " + hex(in, have)
                    : have + " of " + MutualAuthentication.PROOF_BYTES + " bytes of its authentication proof";
        }
    }
}
