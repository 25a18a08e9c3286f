package io.rdmacomm.collectives;

import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.CommunicatorException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * The peer side of the collectives a {@link PeerGroup} runs on the server (see there for the wire formats).
 */
public final class Collectives {
    private Collectives() {
    }

    /**
     * Receives one broadcast from the root.
     *
     * @param maxBytes the largest message accepted
     * @throws CommunicatorException if the announced length is negative or exceeds {@code maxBytes}
     * @throws java.io.EOFException if the root closes mid-message
     */
    public static ByteBuffer receiveBroadcast(Communicator root, int maxBytes) throws IOException {
        int length = readInt(root);
        if (length < 0 || length > maxBytes) {
            throw new CommunicatorException("broadcast from " + root.peerName() + " announces " + length
                    + " bytes; at most " + maxBytes + " accepted");
        }
        ByteBuffer data = ByteBuffer.allocate(length);
        root.readFully(data);
        return data.flip();
    }

    /**
     * Takes part in the root's {@link PeerGroup#allToAll}: sends this peer's contribution (its remaining
     * bytes) and returns every participant's contribution in rank order.
     *
     * @throws CommunicatorException if the root's answer is malformed (a different message size, or more
     *     participants than {@code maxParticipants})
     */
    public static AllToAllResult allToAll(Communicator root, ByteBuffer contribution, int maxParticipants)
            throws IOException {
        int msgSize = contribution.remaining();
        ByteBuffer header = ByteBuffer.allocate(4).order(ByteOrder.BIG_ENDIAN).putInt(msgSize).flip();
        root.write(header);
        root.write(contribution);
        root.sync();
        int participants = readInt(root);
        int size = readInt(root);
        if (size != msgSize) {
            throw new CommunicatorException("all-to-all from " + root.peerName() + " answered with message size "
                    + size + ", expected " + msgSize);
        }
        if (participants < 1 || participants > maxParticipants) {
            throw new CommunicatorException("all-to-all from " + root.peerName() + " announces " + participants
                    + " participants; at most " + maxParticipants + " expected");
        }
        ByteBuffer all = ByteBuffer.allocate(Math.multiplyExact(participants, msgSize));
        root.readFully(all);
        return new AllToAllResult(participants, msgSize, all.flip());
    }

    /** The combined result of an all-to-all: {@code participants × msgSize} bytes, rank 0 first. */
    public record AllToAllResult(int participants, int msgSize, ByteBuffer data) {
        /** The contribution of {@code rank} (0 = root), as a read-only view. */
        public ByteBuffer contribution(int rank) {
            if (rank < 0 || rank >= participants) {
                throw new IndexOutOfBoundsException("rank " + rank + " of " + participants);
            }
            return data.duplicate().position(rank * msgSize).limit((rank + 1) * msgSize).slice().asReadOnlyBuffer();
        }
    }

    private static int readInt(Communicator c) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(4).order(ByteOrder.BIG_ENDIAN);
        c.readFully(b);
        return b.getInt(0);
    }
}
