package io.rdmacomm.api.support;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.OperatingSystemMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;

/**
 * How many connections a server process can hold within its file-descriptor limit, decided at start, as Redis
 * lowers maxclients to what RLIMIT_NOFILE allows. The limit is the soft RLIMIT_NOFILE, which the JVM on Linux
 * already raises to the hard limit as it starts (HotSpot's {@code -XX:+MaxFDLimit}, on by default). From it the
 * budget takes what the process holds now, a fixed reserve for the server's own work (log files, libraries, the
 * listener, a transport's threads) and the descriptors of peers in handshake; what is left, divided by what one
 * connection costs, is the most connections the server can hold.
 */
public final class DescriptorBudget {
    /** Descriptors kept free for the server's own work, beyond what it holds at start. */
    public static final int RESERVE = 64;
    /** At most this share (1/n) of the free descriptors goes to peers in handshake. */
    static final int HANDSHAKE_SHARE = 8;

    private DescriptorBudget() {
    }

    /**
     * What a server may hold.
     *
     * @param limit the descriptor limit (soft RLIMIT_NOFILE), or -1 if unknown (then nothing is reduced)
     * @param inUse descriptors open when the plan was made
     * @param perConnection descriptors one connection holds in the server
     * @param maxConnections connections the server may hold at once: the requested number, or less if that did not fit
     * @param requestedConnections what was asked for
     * @param maxHandshakes peers in handshake at once: the requested number, or less if that did not fit
     * @param requestedHandshakes what was asked for
     * @param perPeer descriptors the server holds per peer process, shared by that process's connections (0: none)
     * @param maxPeers the peer processes the server may hold connections from at once (as many as connections where
     *     {@code perPeer} is 0)
     * @param shared descriptors the transport holds however many connections there are (taken from the limit first)
     */
    public record Plan(long limit, long inUse, int perConnection, int maxConnections, int requestedConnections,
            int maxHandshakes, int requestedHandshakes, int perPeer, int maxPeers, int shared) {

        /** Whether either number had to be reduced. */
        public boolean reduced() {
            return maxConnections < requestedConnections || maxHandshakes < requestedHandshakes;
        }

        /**
         * One line for the server's start: {@code "descriptors: limit 20000, 41 in use, 1 per connection: 10000
         * connections, 1024 in handshake"}, saying what was reduced and why; with a cost per peer process,
         * {@code "1 per connection and 2 per peer process: 10000 connections from up to 4403 processes"}.
         */
        public String describe(String what) {
            StringBuilder b = new StringBuilder("descriptors: limit ");
            b.append(limit < 0 ? "unknown" : Long.toString(limit)).append(", ").append(inUse < 0 ? "?" : inUse)
                    .append(" in use, ");
            if (shared > 0) {
                b.append(shared).append(" kept for connections in setup, ");
            }
            b.append(perConnection).append(" per connection");
            if (perPeer > 0) {
                b.append(" and ").append(perPeer).append(" per peer process");
            }
            b.append(": ").append(maxConnections).append(' ').append(what);
            if (maxConnections < requestedConnections) {
                b.append(" (reduced from ").append(requestedConnections).append(" to fit the limit)");
            }
            if (perPeer > 0) {
                b.append(" from up to ").append(maxPeers).append(" processes");
            }
            b.append(", ").append(maxHandshakes).append(" in handshake");
            if (maxHandshakes < requestedHandshakes) {
                b.append(" (reduced from ").append(requestedHandshakes).append(')');
            }
            if (maxConnections < requestedConnections || perPeer > 0 && maxPeers < maxConnections) {
                b.append("; raise the limit (ulimit -n) to hold more");
            }
            return b.toString();
        }
    }

    /** The plan for this process now, with its descriptor limit and the descriptors it holds. */
    public static Plan plan(int requestedConnections, int perConnection, int requestedHandshakes) {
        return plan(limit(), inUse(), requestedConnections, perConnection, requestedHandshakes);
    }

    /**
     * The plan for this process now where the transport also holds {@code perPeer} descriptors per peer process and
     * {@code shared} however many connections there are.
     */
    public static Plan planWithPeers(int requestedConnections, int perConnection, int perPeer, int shared,
            int requestedHandshakes) {
        return plan(limit(), inUse(), requestedConnections, perConnection, perPeer, shared, requestedHandshakes);
    }

    /**
     * The plan for a process with {@code limit} descriptors of which {@code inUse} are open.
     *
     * @throws IllegalArgumentException if a count is not positive
     */
    public static Plan plan(long limit, long inUse, int requestedConnections, int perConnection,
            int requestedHandshakes) {
        return plan(limit, inUse, requestedConnections, perConnection, 0, 0, requestedHandshakes);
    }

    /**
     * The plan for a process with {@code limit} descriptors of which {@code inUse} are open, for connections that
     * cost {@code perConnection} each and {@code perPeer} per peer process they come from, and {@code shared} in all.
     * After the reserve, the shared ones and the handshakes, the rest goes to connections, as many as asked for
     * where each could come from a process of its own; else at least a quarter of it is left for peer processes,
     * and the rest holds connections from fewer processes (the server refuses a connection from one process more).
     *
     * @throws IllegalArgumentException if a count is not positive, or perPeer or shared is negative
     */
    public static Plan plan(long limit, long inUse, int requestedConnections, int perConnection, int perPeer,
            int shared, int requestedHandshakes) {
        if (requestedConnections < 1 || perConnection < 1 || requestedHandshakes < 1 || perPeer < 0 || shared < 0) {
            throw new IllegalArgumentException("connections " + requestedConnections + ", descriptors per connection "
                    + perConnection + " and handshakes " + requestedHandshakes + " must be positive, descriptors per"
                    + " peer process " + perPeer + " and shared " + shared + " not negative");
        }
        if (limit < 0) {
            return new Plan(limit, inUse, perConnection, requestedConnections, requestedConnections,
                    requestedHandshakes, requestedHandshakes, perPeer, requestedConnections, shared);
        }
        long free = Math.max(0, limit - Math.max(0, inUse) - RESERVE - shared);
        int handshakes = (int) Math.max(1, Math.min(requestedHandshakes, free / HANDSHAKE_SHARE));
        long left = Math.max(0, free - handshakes);
        if (perPeer == 0) {
            int connections = (int) Math.max(1, Math.min(requestedConnections, left / perConnection));
            return new Plan(limit, inUse, perConnection, connections, requestedConnections, handshakes,
                    requestedHandshakes, 0, connections, shared);
        }
        long each = (long) perConnection + perPeer;
        int connections;
        int peers;
        if ((long) requestedConnections * each <= left) {
            connections = requestedConnections;
            peers = requestedConnections;
        } else {
            long forPeers = Math.max(left - (long) requestedConnections * perConnection, left / 4);
            connections = (int) Math.max(1, Math.min(requestedConnections, (left - forPeers) / perConnection));
            peers = (int) Math.max(1, Math.min(connections, (left - (long) connections * perConnection) / perPeer));
        }
        return new Plan(limit, inUse, perConnection, connections, requestedConnections, handshakes,
                requestedHandshakes, perPeer, peers, shared);
    }

    /** The process's descriptor limit (soft RLIMIT_NOFILE), or -1 where the JVM does not say. */
    public static long limit() {
        OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();
        if (os instanceof com.sun.management.UnixOperatingSystemMXBean unix) {
            return unix.getMaxFileDescriptorCount();
        }
        return -1;
    }

    /** Descriptors the process holds now, or -1 where that cannot be read. */
    public static long inUse() {
        try (Stream<Path> fds = Files.list(Path.of("/proc/self/fd"))) {
            return fds.count() - 1; // less the one listing the directory
        } catch (IOException | RuntimeException e) {
            OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();
            if (os instanceof com.sun.management.UnixOperatingSystemMXBean unix) {
                return unix.getOpenFileDescriptorCount();
            }
            return -1;
        }
    }
}
