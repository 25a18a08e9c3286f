package io.rdmacomm.collectives;

import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.CommunicatorException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * The server side of a group of peers, for the collectives of the seed systems: {@link #broadcast} and the
 * sequential {@link #allToAll}. Rank 0 is the server (the root); peers get ranks 1, 2, … in the order they were
 * added. Written on the {@link Communicator} contract alone, so it works on every transport; the peers use
 * {@link Collectives} on their side.
 *
 * <p>Wire formats (big-endian): broadcast = {@code u32 length, bytes}; all-to-all contribution from a peer =
 * {@code u32 msgSize, bytes}; all-to-all result to each peer = {@code u32 participants, u32 msgSize,
 * participants × msgSize bytes} in rank order.
 *
 * <p>Not thread-safe: one thread runs the collectives of a group. Closing the group closes its peers.
 */
public final class PeerGroup implements AutoCloseable {
    /** The default and the seed systems' maximum number of peers. */
    public static final int DEFAULT_MAX_PEERS = 64;
    /** The largest message a collective carries (a bound against garbage lengths). */
    public static final int MAX_MESSAGE_BYTES = 64 << 20;

    private final int maxPeers;
    private final List<Communicator> peers = new ArrayList<>();
    private final ByteBuffer header = ByteBuffer.allocate(8).order(ByteOrder.BIG_ENDIAN);

    /** An empty group of at most {@code maxPeers} peers. */
    public PeerGroup(int maxPeers) {
        if (maxPeers < 1) {
            throw new IllegalArgumentException("maxPeers must be at least 1, got " + maxPeers);
        }
        this.maxPeers = maxPeers;
    }

    /** An empty group of at most {@link #DEFAULT_MAX_PEERS} peers. */
    public PeerGroup() {
        this(DEFAULT_MAX_PEERS);
    }

    /**
     * Adds a connected peer and returns its rank.
     *
     * @throws IllegalStateException if the group already holds its maximum number of peers
     */
    public int add(Communicator peer) {
        if (peers.size() >= maxPeers) {
            throw new IllegalStateException("peer group is full: at most " + maxPeers + " peers (rejected "
                    + peer.peerName() + ")");
        }
        peers.add(peer);
        return peers.size();
    }

    /** The number of peers (the root not counted). */
    public int size() {
        return peers.size();
    }

    public int maxPeers() {
        return maxPeers;
    }

    /** The peer of rank {@code rank} (1-based). */
    public Communicator peer(int rank) {
        return peers.get(rank - 1);
    }

    /** The peers in rank order. */
    public List<Communicator> peers() {
        return Collections.unmodifiableList(peers);
    }

    /**
     * Sends {@code data} (its remaining bytes) to every peer, in rank order, and syncs each.
     *
     * @throws CommunicatorException naming the rank and peer that failed; peers before it have the data
     */
    public void broadcast(ByteBuffer data) throws IOException {
        int length = data.remaining();
        checkLength(length);
        for (int i = 0; i < peers.size(); i++) {
            Communicator peer = peers.get(i);
            try {
                header.clear();
                header.putInt(length).flip();
                peer.write(header);
                peer.write(data.duplicate());
                peer.sync();
            } catch (IOException e) {
                throw failure("broadcast", i + 1, peer, e);
            }
        }
        data.position(data.limit());
    }

    /**
     * The sequential all-to-all of the seed systems: every participant (root and peers) contributes
     * {@code msgSize} bytes and every one ends with all contributions in rank order. The root receives each
     * peer's contribution in rank order, then sends the combined result to each peer in rank order.
     *
     * @param contribution the root's {@code msgSize} bytes (its remaining bytes)
     * @return the combined {@code (size() + 1) × msgSize} bytes, rank 0 first
     * @throws CommunicatorException if a peer contributes a different size (naming the rank and both sizes)
     *     or fails
     */
    public ByteBuffer allToAll(ByteBuffer contribution) throws IOException {
        int msgSize = contribution.remaining();
        checkLength(msgSize);
        long total = (long) msgSize * (peers.size() + 1);
        if (total > MAX_MESSAGE_BYTES) {
            throw new IllegalArgumentException("all-to-all result of " + total + " bytes exceeds "
                    + MAX_MESSAGE_BYTES);
        }
        ByteBuffer result = ByteBuffer.allocate((int) total);
        result.put(contribution.duplicate());
        for (int i = 0; i < peers.size(); i++) {
            Communicator peer = peers.get(i);
            try {
                header.clear().limit(4);
                peer.readFully(header);
                int theirs = header.getInt(0);
                if (theirs != msgSize) {
                    throw new CommunicatorException("all-to-all: rank " + (i + 1) + " (" + peer.peerName()
                            + ") contributed " + theirs + " bytes, expected " + msgSize);
                }
                result.limit(result.position() + msgSize);
                peer.readFully(result);
                result.limit(result.capacity());
            } catch (IOException e) {
                throw failure("all-to-all", i + 1, peer, e);
            }
        }
        result.flip();
        for (int i = 0; i < peers.size(); i++) {
            Communicator peer = peers.get(i);
            try {
                header.clear();
                header.putInt(peers.size() + 1).putInt(msgSize).flip();
                peer.write(header);
                peer.write(result.duplicate());
                peer.sync();
            } catch (IOException e) {
                throw failure("all-to-all", i + 1, peer, e);
            }
        }
        contribution.position(contribution.limit());
        return result;
    }

    private static void checkLength(int length) {
        if (length > MAX_MESSAGE_BYTES) {
            throw new IllegalArgumentException("collective message of " + length + " bytes exceeds "
                    + MAX_MESSAGE_BYTES);
        }
    }

    private static IOException failure(String what, int rank, Communicator peer, IOException cause) {
        if (cause instanceof CommunicatorException && cause.getMessage() != null
                && cause.getMessage().startsWith(what)) {
            return cause;
        }
        return new CommunicatorException(what + " failed at rank " + rank + " (" + peer.peerName() + "): "
                + cause.getMessage(), cause);
    }

    /** Closes every peer; the first failure is thrown after all were tried. */
    @Override
    public void close() throws IOException {
        IOException first = null;
        for (Communicator peer : peers) {
            try {
                peer.close();
            } catch (IOException e) {
                if (first == null) {
                    first = e;
                } else {
                    first.addSuppressed(e);
                }
            }
        }
        peers.clear();
        if (first != null) {
            throw first;
        }
    }
}
