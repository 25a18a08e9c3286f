package io.rdmacomm.tcp;

import io.rdmacomm.api.Endpoint;
import io.rdmacomm.api.support.RateLimitedLog;
import java.io.IOException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.concurrent.TimeUnit;

/**
 * The peers of a {@link TcpServer} in handshake, by their keys on its accept thread's selector: oldest first, and
 * apart those that have sent nothing yet, silent longest first. It drops a peer at its handshakeTimeout, or one
 * silent for {@link TcpServer#EVICT_SILENT_AFTER_NANOS} to make room for a newcomer, and lets the selector release
 * the keys it cancelled, so that their descriptors close. Only the accept thread uses it.
 */
final class PendingHandshakes {
    private final Endpoint endpoint;
    private final Settings settings;
    private final Selector selector;
    /** The server's log of dropped peers, rate-limited. */
    private final RateLimitedLog peerLog;
    /** Keys of peers in handshake, oldest first (handshakes share one timeout, so also by deadline). */
    private final LinkedHashSet<SelectionKey> pending = new LinkedHashSet<>();
    /** The keys of {@link #pending} whose peer has sent nothing yet, oldest (so silent longest) first. */
    private final LinkedHashSet<SelectionKey> silent = new LinkedHashSet<>();
    /** Whether keys were cancelled whose channels the selector has not released yet. */
    private boolean cancelled;

    PendingHandshakes(Endpoint endpoint, Settings settings, Selector selector, RateLimitedLog peerLog) {
        this.endpoint = endpoint;
        this.settings = settings;
        this.selector = selector;
        this.peerLog = peerLog;
    }

    /** A peer in handshake, its key's attachment: its state and when it was accepted. */
    record Pending(Handshake.Accepting handshake, long acceptedAt) {
    }

    /** Peers in handshake. */
    int size() {
        return pending.size();
    }

    /** A newly accepted peer's key, its attachment a {@link Pending}: the peer has sent nothing yet. */
    void add(SelectionKey key) {
        pending.add(key);
        silent.add(key);
    }

    /** The peer of {@code key} sent something: it is no longer silent. */
    void heard(SelectionKey key) {
        silent.remove(key);
    }

    /** The peer of {@code key} completed its handshake: its key is cancelled, its channel stays open. */
    void completed(SelectionKey key) {
        pending.remove(key);
        silent.remove(key);
        key.cancel();
        cancelled = true;
    }

    /** Drops peers past their deadline; returns the select timeout in ms until the next deadline (0 = none). */
    long expire(long now) {
        for (Iterator<SelectionKey> it = pending.iterator(); it.hasNext(); ) {
            SelectionKey key = it.next();
            Pending p = (Pending) key.attachment();
            long left = p.handshake().deadline - now;
            if (left > 0) {
                return TcpServer.millisUntil(left);
            }
            it.remove();
            peerLog.warn("{}: dropped peer {}: no complete handshake within {} (handshakeTimeout); got {}",
                    endpoint, p.handshake().peer, Settings.format(settings.handshakeTimeout()),
                    p.handshake().received());
            forget(key);
        }
        return 0;
    }

    /** Cancels a key and closes its channel; its descriptor is released at the next select ({@link #flush()}). */
    void forget(SelectionKey key) {
        pending.remove(key);
        silent.remove(key);
        key.cancel();
        cancelled = true;
        TcpServer.closeQuietly(key.channel());
    }

    /** Lets the selector release cancelled keys, so their channels' descriptors close and they may turn blocking. */
    void flush() throws IOException {
        if (cancelled) {
            cancelled = false;
            selector.selectNow();
            selector.selectedKeys().clear(); // readiness is level-triggered: the next select reports it again
        }
    }

    /** In how many ns the peer silent longest may be dropped for a newcomer: 0 now, -1 when no peer is silent. */
    long evictableIn(long now) {
        if (silent.isEmpty()) {
            return -1;
        }
        Pending p = (Pending) silent.iterator().next().attachment();
        return Math.max(0, p.acceptedAt() + TcpServer.EVICT_SILENT_AFTER_NANOS - now);
    }

    /** Drops the peer silent longest if it was silent long enough; true if it did. */
    boolean evictSilent(long now, String why) {
        if (evictableIn(now) != 0) {
            return false;
        }
        SelectionKey key = silent.iterator().next();
        Pending p = (Pending) key.attachment();
        peerLog.warn("{}: dropped peer {}: it sent nothing for {} while {}", endpoint, p.handshake().peer,
                TimeUnit.NANOSECONDS.toMillis(now - p.acceptedAt()) + " ms", why);
        forget(key);
        return true;
    }
}
