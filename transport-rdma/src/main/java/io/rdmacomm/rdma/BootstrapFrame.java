package io.rdmacomm.rdma;

import io.rdmacomm.api.HandshakeException;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;

/**
 * One message of the bootstrap handshake on the engine's own TCP socket, read incrementally and checked before
 * anything is allocated for it:
 *
 * <pre>
 * offset 0  u32 magic 0x52444D42 'RDMB'
 *        4  u16 bootstrap version
 *        6  u8  type: 1 HELLO (client), 2 WELCOME, 3 REFUSE (server)
 *        7  u16 body length (at most {@link #MAX_BODY})
 *        9  body; every body ends in a tail of (u16 type, u16 length, value) entries that fills it exactly:
 *           room for later fields (authentication), unknown entries are skipped
 * </pre>
 */
final class BootstrapFrame {
    static final int MAGIC = 0x52444D42;
    static final short VERSION = 1;
    static final byte HELLO = 1;
    static final byte WELCOME = 2;
    static final byte REFUSE = 3;
    /** A message of {@link io.rdmacomm.api.auth.MutualAuthentication}: challenge, proof or answer, as its body. */
    static final byte AUTH = 4;
    static final int HEADER = 9;
    static final int MAX_BODY = 8192;
    /** HELLO flag bit 0: the client has a shared secret and expects the server to challenge it (AUTH frames). */
    static final int FLAG_AUTHENTICATION = 1;

    private final ByteBuffer header = ByteBuffer.allocate(HEADER);
    private ByteBuffer body;

    /**
     * Reads what {@code ch} has (non-blocking); true once the whole frame arrived.
     *
     * @throws HandshakeException if the header is not a bootstrap header (naming what came instead)
     * @throws EOFException if the peer closed first
     */
    boolean readFrom(SocketChannel ch, String peer) throws IOException {
        if (body == null) {
            if (ch.read(header) < 0) {
                throw new EOFException("bootstrap from " + peer + ": connection closed after " + header.position()
                        + " of " + HEADER + " header bytes");
            }
            if (header.hasRemaining()) {
                return false;
            }
            body = ByteBuffer.allocate(checkHeader(header.flip(), peer));
        }
        if (body.hasRemaining() && ch.read(body) < 0) {
            throw new EOFException("bootstrap from " + peer + ": connection closed after " + body.position()
                    + " of " + body.capacity() + " body bytes");
        }
        return !body.hasRemaining();
    }

    /**
     * Reads a whole frame by {@code deadline} ({@link System#nanoTime()}), blocking: timed reads of the socket's
     * stream (SO_TIMEOUT) wait in one poll of this socket, where a selector per frame cost a descriptor and its
     * creation and teardown on every connection. The socket stays in blocking mode.
     */
    void readBy(SocketChannel ch, long deadline, String peer, String timeoutWhat) throws IOException {
        ch.configureBlocking(true);
        InputStream in = ch.socket().getInputStream();
        while (true) {
            ByteBuffer b = body == null ? header : body;
            if (b.hasRemaining()) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    throw new SocketTimeoutException("bootstrap with " + peer + ": no answer within " + timeoutWhat);
                }
                ch.socket().setSoTimeout((int) Math.min(Integer.MAX_VALUE,
                        Math.max(1, TimeUnit.NANOSECONDS.toMillis(left))));
                int n;
                try {
                    n = in.read(b.array(), b.arrayOffset() + b.position(), b.remaining());
                } catch (SocketTimeoutException e) {
                    continue; // the deadline check above names the wait
                }
                if (n < 0) {
                    throw body == null
                            ? new EOFException("bootstrap from " + peer + ": connection closed after "
                                    + header.position() + " of " + HEADER + " header bytes")
                            : new EOFException("bootstrap from " + peer + ": connection closed after "
                                    + body.position() + " of " + body.capacity() + " body bytes");
                }
                b.position(b.position() + n);
            }
            if (body == null && !header.hasRemaining()) {
                body = ByteBuffer.allocate(checkHeader(header.flip(), peer));
            }
            if (body != null && !body.hasRemaining()) {
                return;
            }
        }
    }

    byte type() {
        return header.get(6);
    }

    /** The body, once {@link #readFrom} returned true. */
    ByteBuffer body() {
        return body.duplicate().flip();
    }

    /** Checks a header and returns the body length. */
    static int checkHeader(ByteBuffer h, String peer) throws HandshakeException {
        int magic = h.getInt(0);
        if (magic != MAGIC) {
            throw new HandshakeException("bootstrap from " + peer + ": expected magic 0x52444d42 ('RDMB'), got "
                    + Wire.describe(h.duplicate().rewind()));
        }
        short version = h.getShort(4);
        if (version != VERSION) {
            throw new HandshakeException("bootstrap from " + peer + ": version " + version + ", expected "
                    + VERSION);
        }
        byte type = h.get(6);
        if (type < HELLO || type > AUTH) {
            throw new HandshakeException("bootstrap from " + peer + ": unknown message type " + type);
        }
        int length = Short.toUnsignedInt(h.getShort(7));
        if (length > MAX_BODY) {
            throw new HandshakeException("bootstrap from " + peer + ": body of " + length + " bytes, more than "
                    + MAX_BODY);
        }
        return length;
    }

    /** A frame of {@code type} around {@code body} (flipped), ready to write. */
    static ByteBuffer frame(byte type, ByteBuffer body) {
        ByteBuffer f = ByteBuffer.allocate(HEADER + body.remaining());
        return f.putInt(MAGIC).putShort(VERSION).put(type).putShort((short) body.remaining()).put(body).flip();
    }

    /** Writes a whole frame; false if the socket did not take it at once (a peer that does not read). */
    static boolean writeTo(SocketChannel ch, ByteBuffer frame) throws IOException {
        ch.write(frame);
        return !frame.hasRemaining();
    }

    // ---- fields ------------------------------------------------------------------------------------------------

    static HandshakeException malformed(String peer, String what, String reason) {
        return new HandshakeException("bootstrap " + what + " from " + peer + ": " + reason);
    }

    /** A u16-length-prefixed byte field of 1..max bytes. */
    static byte[] bytes(ByteBuffer b, int max, String field, String what, String peer) throws HandshakeException {
        int n = u16(b, field, what, peer);
        if (n < 1 || n > max) {
            throw malformed(peer, what, field + " of " + n + " bytes (1 to " + max + " allowed)");
        }
        need(b, n, field, what, peer);
        byte[] v = new byte[n];
        b.get(v);
        return v;
    }

    static int u16(ByteBuffer b, String field, String what, String peer) throws HandshakeException {
        need(b, 2, field, what, peer);
        return Short.toUnsignedInt(b.getShort());
    }

    static int i32(ByteBuffer b, String field, String what, String peer) throws HandshakeException {
        need(b, 4, field, what, peer);
        return b.getInt();
    }

    /** The u32 channel id and the positive u32 ring size that end HELLO and WELCOME. */
    static int[] channelAndRing(ByteBuffer b, String what, String peer) throws HandshakeException {
        int channel = i32(b, "channel id", what, peer);
        int ring = i32(b, "ring size", what, peer);
        if (ring <= 0) {
            throw malformed(peer, what, "ring size " + Integer.toUnsignedString(ring) + " (1 to 2147483647 allowed)");
        }
        return new int[] {channel, ring};
    }

    static void need(ByteBuffer b, int n, String field, String what, String peer) throws HandshakeException {
        if (b.remaining() < n) {
            throw malformed(peer, what, "truncated at " + field + " (" + b.remaining() + " of " + n
                    + " bytes left)");
        }
    }

    /** Checks the tail of (type, length, value) entries: it must fill the rest exactly. */
    static void tail(ByteBuffer b, String what, String peer) throws HandshakeException {
        while (b.hasRemaining()) {
            u16(b, "extension type", what, peer);
            int n = u16(b, "extension length", what, peer);
            need(b, n, "extension value", what, peer);
            b.position(b.position() + n);
        }
    }

    static void putBytes(ByteBuffer b, byte[] v) {
        b.putShort((short) v.length).put(v);
    }

    static String ascii(byte[] v) {
        return new String(v, StandardCharsets.US_ASCII);
    }
}
