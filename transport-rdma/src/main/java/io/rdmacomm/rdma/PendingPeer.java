package io.rdmacomm.rdma;

import io.rdmacomm.api.auth.MutualAuthentication;
import java.nio.channels.SocketChannel;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * One client of the {@link BootstrapServer} between accept and ready: reading its HELLO ({@code connection} null),
 * then awaiting the engine's; and the grace of silence after which it gives way to a newcomer when the server's
 * handshake slots are full. Only the server's accept thread touches it.
 */
final class PendingPeer {
    /**
     * A peer in handshake that sent part of its bootstrap and then nothing for this long may be dropped for a
     * newcomer when the slots are full (or to free a descriptor).
     */
    static final long SILENT_NANOS = TimeUnit.SECONDS.toNanos(1);
    /**
     * The same for a peer that sent nothing at all since it was accepted: a client sends its HELLO with its connect,
     * so under a flood, when peers wait in the listen queue, its HELLO is there when it is accepted. A shorter grace
     * lets a flood of silent connections drain at slots / 100 ms rather than slots / s.
     */
    static final long NEVER_HEARD_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
    final SocketChannel socket;
    final String peer;
    final long deadline;
    /** When the peer last sent something (or was accepted). */
    long heard;
    /** Whether it sent anything since it was accepted. */
    boolean heardAny;
    BootstrapFrame frame = new BootstrapFrame();
    /** Set once the HELLO arrived while the client's proof is awaited. */
    BootstrapHello hello;
    MutualAuthentication.Server auth;
    Connection connection;

    PendingPeer(SocketChannel socket, String peer, long now, long timeoutNanos) {
        this.socket = socket;
        this.peer = peer;
        this.heard = now;
        this.deadline = now + timeoutNanos;
    }

    /** Whether the server waits for the peer's bytes (not for the provider). */
    boolean awaitsPeer() {
        return connection == null;
    }

    /** How long past its grace this peer has been silent at {@code now} (negative: still within it). */
    long overdue(long now) {
        return now - heard - (heardAny ? SILENT_NANOS : NEVER_HEARD_NANOS);
    }

    /**
     * The peer of {@code peers} that the server waits on and that is longest past its grace of silence, or null: that
     * is the one a newcomer replaces once its grace is over.
     */
    static PendingPeer silentLongest(List<PendingPeer> peers, long now) {
        PendingPeer oldest = null;
        long most = Long.MIN_VALUE;
        for (PendingPeer p : peers) {
            long o = p.overdue(now);
            if (p.awaitsPeer() && o > most) {
                oldest = p;
                most = o;
            }
        }
        return oldest;
    }

    /** The peer of {@code peers} silent longest if its grace of silence is over, else null. */
    static PendingPeer evictable(List<PendingPeer> peers, long now) {
        PendingPeer p = silentLongest(peers, now);
        return p == null || p.overdue(now) < 0 ? null : p;
    }
}
