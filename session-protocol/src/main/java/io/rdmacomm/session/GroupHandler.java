package io.rdmacomm.session;

import io.rdmacomm.api.Communicator;
import io.rdmacomm.collectives.PeerGroup;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link Exchange#ALLTOALL} and {@link Exchange#BROADCAST}, the collectives of the seed's multi-peer library, run
 * across sessions: each client's session joins the named group and waits until the group has the announced number
 * of members (all must announce the same exchange, member count and, for all-to-all, message size), or until the
 * group timeout, counted from the first member's arrival, expires. The member that completes the group runs the
 * collective for everyone on a {@link PeerGroup} with the server as rank 0 and the members as ranks 1… in order of
 * arrival; it first sends each member a result with body {@code short rank | short participants | short source
 * rank}, then the collective's own frames follow, then an empty result once every member has its part, after
 * which members may end their sessions. The server's all-to-all contribution is the text
 * {@link #SERVER_CONTRIBUTION} padded with zero bytes (or cut) to the message size. A broadcast carries the
 * message of the lowest-ranked member that offered one (source rank), or, if none did, the server's
 * {@code "servercomm to group '<name>' of <K> members"} (source rank 0).
 */
final class GroupHandler implements ExchangeHandler {
    static final String SERVER_CONTRIBUTION = "server";
    private static final Logger LOG = LoggerFactory.getLogger(GroupHandler.class);

    private final int maxGroupSize;
    private final Duration timeout;
    private final Map<String, Group> forming = new HashMap<>();

    GroupHandler(int maxGroupSize, Duration timeout) {
        this.maxGroupSize = maxGroupSize;
        this.timeout = timeout;
    }

    @Override
    public void validate(SessionRequest request) throws SessionException {
        if (request.members() > maxGroupSize) {
            throw new SessionException(SessionStatus.GROUP_TOO_LARGE, "group '" + request.group() + "' of "
                    + request.members() + " members exceeds this server's maximum of " + maxGroupSize
                    + " (servercomm --max-group-size)");
        }
    }

    @Override
    public void run(Communicator peer, SessionRequest request) throws IOException {
        byte[] offered = new byte[0];
        if (request.exchange() == Exchange.BROADCAST && request.groupMessageSize() > 0) {
            ByteBuffer message = ByteBuffer.allocate(request.groupMessageSize());
            if (!HandlerSupport.readFrame(peer, message, "BROADCAST message")) {
                return;
            }
            offered = message.array();
        }
        Shape shape = new Shape(request.exchange(), request.members(),
                request.exchange() == Exchange.ALLTOALL ? request.groupMessageSize() : 0);
        Member me = new Member(peer, offered);
        Group group;
        boolean complete = false;
        // the shape of the group of that name forming already, where it differs from this client's
        Shape mismatch;
        synchronized (forming) {
            group = forming.get(request.group());
            mismatch = group == null || group.shape.equals(shape) ? null : group.shape;
            if (mismatch == null) {
                if (group == null) {
                    group = new Group(request.group(), shape, System.nanoTime() + timeout.toNanos());
                    forming.put(group.name, group);
                }
                group.members.add(me);
                complete = group.members.size() == shape.members;
                if (complete) {
                    forming.remove(group.name);
                    group.started = true;
                }
            }
        }
        if (mismatch != null) {
            // reported outside the lock: the report waits for the client to end its stream, and every group forms
            // under that lock
            HandlerSupport.report(peer, ExchangeResult.error(SessionStatus.GROUP_MISMATCH, "group '"
                    + request.group() + "' is forming " + mismatch + "; this client asked for " + shape));
            return;
        }
        if (complete) {
            runCollective(group);
        } else if (!awaitCollective(group, me)) {
            return;
        }
        HandlerSupport.awaitEndOfStream(peer);
    }

    /** Whether a group of this name is forming (has members and waits for more); for tests. */
    boolean isForming(String name) {
        synchronized (forming) {
            return forming.containsKey(name);
        }
    }

    /** Waits for the group's collective; returns whether it succeeded, after telling this member if it expired. */
    private boolean awaitCollective(Group group, Member me) throws IOException {
        try {
            try {
                group.done.get(Math.max(0, group.deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            } catch (TimeoutException e) {
                expire(group);
                // the group may have filled just before the deadline; then the collective decides
                group.done.get();
            }
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while waiting for group '" + group.name + "'", e);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof Expired expired) {
                HandlerSupport.report(me.peer, ExchangeResult.error(SessionStatus.GROUP_TIMEOUT, expired.getMessage()));
            } else {
                LOG.warn("group '{}' failed for {}: {}", group.name, me.peer.peerName(), e.getCause().toString());
            }
            return false;
        }
    }

    private void expire(Group group) {
        synchronized (forming) {
            if (group.started) {
                return;
            }
            forming.remove(group.name, group);
            group.started = true;
            group.done.completeExceptionally(new Expired("group '" + group.name + "' got " + group.members.size()
                    + " of " + group.shape.members + " members within " + timeout.toMillis() + " ms"));
        }
    }

    private void runCollective(Group group) throws IOException {
        try {
            PeerGroup peers = new PeerGroup(maxGroupSize);
            for (Member m : group.members) {
                peers.add(m.peer);
            }
            int participants = group.members.size() + 1;
            int source = 0;
            byte[] message = ("servercomm to group '" + group.name + "' of " + group.shape.members + " members")
                    .getBytes(StandardCharsets.UTF_8);
            if (group.shape.exchange == Exchange.BROADCAST) {
                for (int rank = 1; rank < participants && source == 0; rank++) {
                    byte[] offered = group.members.get(rank - 1).offered;
                    if (offered.length > 0) {
                        source = rank;
                        message = offered;
                    }
                }
            }
            for (int rank = 1; rank < participants; rank++) {
                ExchangeResult.ok(ByteBuffer.allocate(6).putShort((short) rank).putShort((short) participants)
                        .putShort((short) source).flip()).send(peers.peer(rank));
            }
            if (group.shape.exchange == Exchange.ALLTOALL) {
                byte[] contribution = Arrays.copyOf(SERVER_CONTRIBUTION.getBytes(StandardCharsets.UTF_8),
                        group.shape.size);
                peers.allToAll(ByteBuffer.wrap(contribution));
            } else {
                peers.broadcast(ByteBuffer.wrap(message));
            }
            // a member may end its session once it has its part; until this, none may: an early close could
            // fail the sync of another member's part on transports whose sync waits for the peer
            for (int rank = 1; rank < participants; rank++) {
                try {
                    ExchangeResult.ok(ByteBuffer.allocate(0)).send(peers.peer(rank));
                } catch (IOException e) {
                    LOG.debug("group '{}': rank {} left before the completion", group.name, rank, e);
                }
            }
            LOG.info("group '{}': {} of {} participants done", group.name, group.shape.exchange, participants);
            group.done.complete(null);
        } catch (IOException | RuntimeException e) {
            group.done.completeExceptionally(e);
            throw e;
        }
    }

    /** What all members of a group must agree on. */
    private record Shape(Exchange exchange, int members, int size) {
        @Override
        public String toString() {
            return exchange + " of " + members + " members"
                    + (exchange == Exchange.ALLTOALL ? " with " + size + "-byte messages" : "");
        }
    }

    private record Member(Communicator peer, byte[] offered) {
    }

    /** A group while it forms and runs. Its members list and {@code started} are guarded by the handler's map. */
    private static final class Group {
        final String name;
        final Shape shape;
        final long deadline;
        final List<Member> members = new ArrayList<>();
        final CompletableFuture<Void> done = new CompletableFuture<>();
        boolean started;

        Group(String name, Shape shape, long deadline) {
            this.name = name;
            this.shape = shape;
            this.deadline = deadline;
        }
    }

    /** The group did not fill in time. */
    private static final class Expired extends Exception {
        private static final long serialVersionUID = 1L;

        Expired(String message) {
            super(message);
        }
    }
}
