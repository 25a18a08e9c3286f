package io.rdmacomm.tcp;

import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.security.cert.CertPathBuilderException;
import java.security.cert.CertificateExpiredException;
import java.security.cert.CertificateNotYetValidException;
import java.util.concurrent.locks.ReentrantLock;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLEngineResult;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLSession;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One connection's TLS engine between the socket and the plaintext: a non-blocking {@link #handshake} step, then
 * {@link #read} (unwrap) by the connection's one reader and {@link #wrap}/{@link #flush} (under {@link #output})
 * by its writers; the engine allows the two directions to run at once. Whether a call blocks is the channel's
 * mode: on a non-blocking channel {@link #read} returns 0 and {@link #flush} false when the caller must wait.
 */
final class TlsSession {
    private static final Logger LOG = LoggerFactory.getLogger(TlsSession.class);
    private static final ByteBuffer[] NOTHING = {ByteBuffer.allocate(0)};
    /**
     * Records the socket buffers hold at most, each way: sealed records go out in writes of up to this many, and
     * reads take up to this many at once. Each buffer starts at one record (what an idle connection holds) and
     * doubles whenever a transfer fills it, up to this: 1 MiB writes ran about 20 % faster than with 4 records
     * (JDK 25, BoringSSL, loopback), and no faster with 64.
     */
    static final int MAX_RECORDS_BUFFERED = 16;

    private final SSLEngine engine;
    private final String peer;
    /** Held by whoever wraps and flushes, so records leave in the order they were sealed. */
    private final ReentrantLock output = new ReentrantLock();
    /** Bytes from the socket not yet unwrapped (read mode). Reader's. */
    private ByteBuffer netIn;
    /** Plaintext unwrapped but not yet read (read mode). Reader's. */
    private ByteBuffer appIn;
    /** Records sealed but not yet sent (read mode). Under {@link #output}. */
    private ByteBuffer netOut;
    /** Whether the last read from the socket filled {@link #netIn}: more was waiting, so the next read takes more. */
    private boolean netInFilled;
    private long bytesRead;
    private boolean handshakeDone;
    private boolean inboundDone;
    /** Whether the buffers are direct, as the engine prefers ({@link TlsConfig.Engines#directBuffers()}). */
    private final boolean direct;

    TlsSession(SSLEngine engine, String peer, boolean direct) {
        this.engine = engine;
        this.peer = peer;
        this.direct = direct;
        SSLSession s = engine.getSession();
        this.netIn = allocate(s.getPacketBufferSize()).flip();
        this.appIn = allocate(s.getApplicationBufferSize()).flip();
        this.netOut = allocate(s.getPacketBufferSize()).flip();
    }

    private ByteBuffer allocate(int size) {
        return direct ? ByteBuffer.allocateDirect(size) : ByteBuffer.allocate(size);
    }

    /** The largest record's size on the wire, the unit of the socket buffers (for tests). */
    int packetSize() {
        return engine.getSession().getPacketBufferSize();
    }

    /** The capacities of the received-records and sealed-records buffers (for tests). */
    int[] socketBufferCapacities() {
        return new int[] {netIn.capacity(), netOut.capacity()};
    }

    ReentrantLock output() {
        return output;
    }

    /** Bytes read from the peer's socket so far. */
    long bytesRead() {
        return bytesRead;
    }

    /** What arrived from the peer and was not unwrapped yet (for messages about a peer that does not speak TLS). */
    ByteBuffer received() {
        return netIn.asReadOnlyBuffer();
    }

    /**
     * Advances the handshake as far as the channel allows.
     *
     * @return 0 once the handshake is complete, else the {@link SelectionKey} interest to wait for
     * @throws SSLException if the handshake failed (the alert for the peer was sent if the socket took it)
     */
    int handshake(SocketChannel c) throws IOException {
        output.lock();
        try {
            return handshakeStep(c);
        } catch (SSLException e) {
            if (peerSpeaksTls()) {
                sendAlert(c);
            }
            throw e;
        } finally {
            output.unlock();
        }
    }

    private int handshakeStep(SocketChannel c) throws IOException {
        if (engine.getHandshakeStatus() == SSLEngineResult.HandshakeStatus.NOT_HANDSHAKING && !handshakeDone) {
            engine.beginHandshake();
        }
        for (;;) {
            if (!flush(c)) {
                return SelectionKey.OP_WRITE;
            }
            if (handshakeDone) {
                return 0;
            }
            switch (engine.getHandshakeStatus()) {
                case NEED_TASK -> runTasks();
                case NEED_WRAP -> {
                    netOut.compact();
                    SSLEngineResult r;
                    try {
                        r = engine.wrap(NOTHING, netOut);
                    } finally {
                        netOut.flip();
                    }
                    noteFinished(r);
                    if (r.getStatus() == SSLEngineResult.Status.CLOSED) {
                        flush(c);
                        throw new SSLException("the TLS engine closed during the handshake");
                    }
                }
                case NEED_UNWRAP, NEED_UNWRAP_AGAIN -> {
                    SSLEngineResult r = unwrap(appInForWriting());
                    appIn.flip();
                    noteFinished(r);
                    if (r.getStatus() == SSLEngineResult.Status.BUFFER_UNDERFLOW) {
                        int n = fill(c);
                        if (n < 0) {
                            throw new EOFException("peer " + peer + " closed the connection during the TLS"
                                    + " handshake");
                        }
                        if (n == 0) {
                            return SelectionKey.OP_READ;
                        }
                    } else if (r.getStatus() == SSLEngineResult.Status.CLOSED) {
                        throw new SSLException("peer " + peer + " closed TLS during the handshake");
                    }
                }
                default -> handshakeDone = true;
            }
        }
    }

    private void noteFinished(SSLEngineResult r) {
        if (r.getHandshakeStatus() == SSLEngineResult.HandshakeStatus.FINISHED) {
            handshakeDone = true;
        }
    }

    private void runTasks() {
        for (Runnable task; (task = engine.getDelegatedTask()) != null; ) {
            task.run();
        }
    }

    /** Whether the unread input starts with a TLS record (content types 20 to 24), not some other protocol. */
    private boolean peerSpeaksTls() {
        return !netIn.hasRemaining() || netIn.get(netIn.position()) >= 20 && netIn.get(netIn.position()) <= 24;
    }

    /**
     * What went wrong in a failed handshake, for people: a hint naming the likely cause, then the JDK's words.
     *
     * @param whose the peer's certificate as the reporting side calls it ("the server's")
     * @param ours this side's certificate as it calls it ("our")
     */
    static String explain(IOException e, String whose, String ours) {
        Throwable root = e;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        String m = String.valueOf(e.getMessage());
        // the JDK's words, or BoringSSL's (tlsEngine=openssl), which come as the root cause's message or in ours
        String all = m + "; " + root.getMessage();
        String hint;
        if (root instanceof CertificateExpiredException) {
            hint = whose + " certificate has expired";
        } else if (root instanceof CertificateNotYetValidException) {
            hint = whose + " certificate is not valid yet";
        } else if (all.contains("PKIX path") || root instanceof CertPathBuilderException) {
            hint = whose + " certificate is not signed by a CA this side trusts (tlsTrust)";
        } else if (all.contains("subject alternative") || all.contains("No name matching")) {
            hint = whose + " certificate does not name the host that was dialled";
        } else if (all.contains("Empty client certificate chain")
                || all.contains("PEER_DID_NOT_RETURN_A_CERTIFICATE")) {
            hint = "the client sent no certificate, and this server requires one (tlsClientAuth=required)";
        } else if (all.contains("Received fatal alert") || all.contains("_ALERT_")) {
            hint = "the peer refused the TLS handshake" + (all.contains("ertificate") || all.contains("CERTIFICATE")
                    || all.contains("_CA") ? ": it did not accept " + ours + " certificate, or its absence (the"
                    + " server's tlsClientAuth, the peer's tlsTrust)" : "");
        } else {
            hint = "the TLS handshake failed";
        }
        String detail = root == e ? m : m + "; " + root.getMessage();
        return hint + " (" + detail + ")";
    }

    /** After a failed handshake: seals the engine's alert and tries once to send it, so the peer learns why. */
    private void sendAlert(SocketChannel c) {
        try {
            engine.closeOutbound();
            netOut.compact();
            try {
                engine.wrap(NOTHING, netOut);
            } finally {
                netOut.flip();
            }
            c.write(netOut);
        } catch (IOException | RuntimeException e) {
            LOG.debug("could not send the TLS alert to {}", peer, e);
        }
    }

    /**
     * Reads plaintext into {@code dst} (which has space): what is buffered, else what the records that arrive
     * hold; 0 if a non-blocking channel has nothing complete yet, -1 once the peer closed TLS or the socket.
     */
    int read(SocketChannel c, ByteBuffer dst) throws IOException {
        for (;;) {
            if (appIn.hasRemaining()) {
                return take(dst);
            }
            if (inboundDone) {
                return -1;
            }
            if (netIn.hasRemaining()) {
                boolean intoDst = dst.remaining() >= appIn.capacity();
                int before = dst.position();
                SSLEngineResult r = unwrap(intoDst ? dst : appInForWriting());
                if (!intoDst) {
                    appIn.flip();
                }
                switch (r.getStatus()) {
                    case OK -> {
                        afterUnwrap(c, r);
                        if (intoDst && dst.position() > before) {
                            return dst.position() - before;
                        }
                        continue;
                    }
                    case CLOSED -> {
                        inboundDone = true;
                        continue;
                    }
                    case BUFFER_OVERFLOW -> {
                        appIn = allocate(engine.getSession().getApplicationBufferSize()).flip();
                        continue;
                    }
                    default -> {
                        // BUFFER_UNDERFLOW: the next record is incomplete; read more below
                    }
                }
            }
            int n = fill(c);
            if (n < 0) {
                inboundDone = true;
                closeInbound();
                // TLS ends a stream with close_notify, which our close sends: a bare end of the socket is a cut
                throw new EOFException("peer " + peer + " closed the connection without ending TLS (no"
                        + " close_notify): it may have died, and what it sent last may be cut short");
            } else if (n == 0) {
                return 0;
            }
        }
    }

    /** A record that was not application data may ask us to answer (a TLS 1.3 key update). */
    private void afterUnwrap(SocketChannel c, SSLEngineResult r) throws IOException {
        SSLEngineResult.HandshakeStatus hs = r.getHandshakeStatus();
        if (hs == SSLEngineResult.HandshakeStatus.NEED_TASK) {
            runTasks();
            hs = engine.getHandshakeStatus();
        }
        // a writer holding the lock seals the answer before its own next record; else we send it now
        if (hs == SSLEngineResult.HandshakeStatus.NEED_WRAP && output.tryLock()) {
            try {
                if (!netOut.hasRemaining()) {
                    wrap(NOTHING);
                }
                flush(c);
            } finally {
                output.unlock();
            }
        }
    }

    private void closeInbound() {
        try {
            engine.closeInbound();
        } catch (SSLException expected) {
            // the engine complains of the missing close_notify; the caller reports it
        }
    }

    private SSLEngineResult unwrap(ByteBuffer dst) throws SSLException {
        return engine.unwrap(netIn, dst);
    }

    /** {@link #appIn} cleared for the engine to write into; the caller flips it back. */
    private ByteBuffer appInForWriting() {
        return appIn.clear();
    }

    private int take(ByteBuffer dst) {
        int n = Math.min(appIn.remaining(), dst.remaining());
        int limit = appIn.limit();
        appIn.limit(appIn.position() + n);
        dst.put(appIn);
        appIn.limit(limit);
        return n;
    }

    /**
     * Reads from the socket into {@link #netIn}, growing it if a record does not fit, or (up to
     * {@link #MAX_RECORDS_BUFFERED} records) if the last read filled it.
     */
    private int fill(SocketChannel c) throws IOException {
        int packet = engine.getSession().getPacketBufferSize();
        boolean full = netIn.position() == 0 && netIn.limit() == netIn.capacity();
        if (full || netInFilled && netIn.capacity() < packet * MAX_RECORDS_BUFFERED) {
            int size = Math.max(packet, netIn.capacity() * 2);
            netIn = allocate(full ? size : Math.min(size, packet * MAX_RECORDS_BUFFERED)).put(netIn).flip();
        }
        netIn.compact();
        try {
            int n = c.read(netIn);
            netInFilled = !netIn.hasRemaining();
            if (n > 0) {
                bytesRead += n;
            }
            return n;
        } finally {
            netIn.flip();
        }
    }

    /**
     * Seals what fits of {@code srcs} into records while the send buffer has room; the caller holds {@link #output}
     * and flushes after.
     */
    private void wrap(ByteBuffer[] srcs) throws IOException {
        int packet = engine.getSession().getPacketBufferSize();
        if (!netOut.hasRemaining() && netOut.capacity() < packet * MAX_RECORDS_BUFFERED
                && remainingBytes(srcs) > netOut.capacity()) {
            // all sent, and more to seal than fits: a bulk transfer, which larger socket writes serve better
            netOut = allocate(Math.min(netOut.capacity() * 2, packet * MAX_RECORDS_BUFFERED)).flip();
        }
        netOut.compact();
        try {
            while (netOut.remaining() >= engine.getSession().getPacketBufferSize()) {
                SSLEngineResult r = engine.wrap(srcs, netOut);
                if (r.getStatus() == SSLEngineResult.Status.CLOSED) {
                    throw new SSLException("TLS with " + peer + " is closed");
                }
                if (r.getHandshakeStatus() == SSLEngineResult.HandshakeStatus.NEED_TASK) {
                    runTasks();
                }
                if (r.bytesProduced() == 0 || !remaining(srcs)) {
                    break;
                }
            }
        } finally {
            netOut.flip();
        }
    }

    private static long remainingBytes(ByteBuffer[] bs) {
        long n = 0;
        for (ByteBuffer b : bs) {
            n += b.remaining();
        }
        return n;
    }

    static boolean remaining(ByteBuffer[] bs) {
        for (ByteBuffer b : bs) {
            if (b.hasRemaining()) {
                return true;
            }
        }
        return false;
    }

    /**
     * Seals and sends what the channel takes of {@code bs}: true once all of it is sent, false when the caller must
     * wait until the channel is writable and call again. Under {@link #output}.
     */
    boolean send(SocketChannel c, ByteBuffer[] bs) throws IOException {
        for (;;) {
            if (!flush(c)) {
                return false;
            }
            if (!remaining(bs)) {
                return true;
            }
            wrap(bs);
        }
    }

    /** Sends sealed records; true once none is left (always, on a blocking channel). Under {@link #output}. */
    boolean flush(SocketChannel c) throws IOException {
        while (netOut.hasRemaining()) {
            if (c.write(netOut) == 0) {
                return false;
            }
        }
        return true;
    }

    /** Seals close_notify, which ends the peer's stream; the caller flushes it. Under {@link #output}. */
    void closeOutbound() throws IOException {
        engine.closeOutbound();
        netOut.compact();
        try {
            while (!engine.isOutboundDone() && netOut.hasRemaining()) {
                if (engine.wrap(NOTHING, netOut).bytesProduced() == 0) {
                    break;
                }
            }
        } finally {
            netOut.flip();
        }
    }
}
