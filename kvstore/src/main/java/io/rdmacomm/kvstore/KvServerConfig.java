package io.rdmacomm.kvstore;

import io.rdmacomm.api.Endpoint;
import io.rdmacomm.api.Units;
import java.time.Duration;
import java.util.Objects;

/**
 * What a {@link KvServer} serves, validated once here.
 *
 * @param listenHost the gRPC control plane's address
 * @param listenPort its port; 0 picks a free one
 * @param dataEndpoint where the data plane listens ({@code rdma://}, {@code tcp://} or {@code local://}); port 0
 *     picks a free one
 * @param memoryBytes the memory pool for values, allocated once at start (at most {@link #MAX_MEMORY})
 * @param maxValueBytes the largest value accepted
 * @param maxKeyBytes the longest key accepted (at most 65535)
 * @param maxSessions sessions served at once
 * @param attachTimeout how long a new session or data connection may take to attach
 * @param valueTransfer how values move on the data plane
 * @param loops threads that serve the data connections as event loops ({@link DataLoop}), each connection on one of
 *     them; 0: a thread per connection (also what a transport that cannot say what is readable gets)
 * @param loopSpin how long an idle loop drives its connections' transport before it sleeps (rdma://: requests are
 *     then taken in on the loop's thread instead of waking it)
 * @param controlEndpoint null: the control plane is gRPC on TCP at listenHost:listenPort; else an {@code rdma://}
 *     or {@code tcp://} endpoint at that host and port: gRPC runs on the project's communicators there (through
 *     transport-netty's channels), and clients connect with the same URI
 * @param maxControlConnections control-plane (gRPC) connections served at once: past it a new session is refused
 *     as BUSY (gRPC's RESOURCE_EXHAUSTED; the sessions of a client process can share one, {@link KvClient#connect(
 *     KvControlClient, KvClient.Options)}); {@link Integer#MAX_VALUE}: no limit
 */
public record KvServerConfig(String listenHost, int listenPort, Endpoint dataEndpoint, long memoryBytes,
        long maxValueBytes, int maxKeyBytes, int maxSessions, Duration attachTimeout, ValueTransfer valueTransfer, int loops,
        Duration loopSpin, Endpoint controlEndpoint, int maxControlConnections) {

    /** The largest pool: one direct buffer, offsets of 31 bits. */
    public static final long MAX_MEMORY = Integer.MAX_VALUE & -Allocator.ALIGN;
    /** How long an idle event loop spins by default. */
    public static final Duration DEFAULT_LOOP_SPIN = Duration.ofNanos(50_000);
    /** The most event loops. */
    public static final int MAX_LOOPS = 64;
    /** The smallest pool. */
    public static final long MIN_MEMORY = 64 * 1024;

    public KvServerConfig {
        Objects.requireNonNull(listenHost, "listenHost");
        Objects.requireNonNull(dataEndpoint, "dataEndpoint");
        Objects.requireNonNull(attachTimeout, "attachTimeout");
        Objects.requireNonNull(valueTransfer, "valueTransfer");
        if (controlEndpoint != null) {
            checkControlEndpoint(controlEndpoint);
            if (!controlEndpoint.host().equals(listenHost) || controlEndpoint.port() != listenPort) {
                throw new IllegalArgumentException("control endpoint " + controlEndpoint + " is not at the listen"
                        + " address " + listenHost + ":" + listenPort);
            }
        }
        if (listenPort < 0 || listenPort > 65535) {
            throw new IllegalArgumentException("listen port " + listenPort + " is not 0 to 65535");
        }
        if (memoryBytes < MIN_MEMORY || memoryBytes > MAX_MEMORY) {
            throw new IllegalArgumentException("memory of " + Units.formatSize(memoryBytes) + ": must be "
                    + Units.formatSize(MIN_MEMORY) + " to " + MAX_MEMORY + " bytes (just under 2g)");
        }
        long largest = (memoryBytes & -Allocator.ALIGN) - Allocator.ALIGN - Allocator.HEADER;
        if (maxValueBytes < 1 || maxValueBytes > largest) {
            throw new IllegalArgumentException("max value of " + maxValueBytes + " bytes: must be 1 to " + largest
                    + " (what a pool of " + Units.formatSize(memoryBytes) + " can hold)");
        }
        if (maxKeyBytes < 1 || maxKeyBytes > DataWire.MAX_KEY) {
            throw new IllegalArgumentException("max key of " + maxKeyBytes + " bytes: must be 1 to "
                    + DataWire.MAX_KEY);
        }
        if (maxSessions < 1) {
            throw new IllegalArgumentException("max sessions must be at least 1, got " + maxSessions);
        }
        Objects.requireNonNull(loopSpin, "loopSpin");
        if (loopSpin.isNegative()) {
            throw new IllegalArgumentException("loop spin must not be negative, got " + loopSpin);
        }
        if (loops < 0 || loops > MAX_LOOPS) {
            throw new IllegalArgumentException("loops must be 0 to " + MAX_LOOPS + ", got " + loops);
        }
        if (attachTimeout.isNegative() || attachTimeout.isZero()) {
            throw new IllegalArgumentException("attach timeout must be positive, got " + attachTimeout);
        }
        if (maxControlConnections < 1) {
            throw new IllegalArgumentException("max control connections must be at least 1, got "
                    + maxControlConnections);
        }
    }

    /**
     * Refuses an endpoint the control plane cannot run on: it takes {@code rdma://} and {@code tcp://}.
     *
     * @throws IllegalArgumentException naming the endpoint
     */
    public static void checkControlEndpoint(Endpoint e) {
        if (!e.scheme().equals("rdma") && !e.scheme().equals("tcp")) {
            throw new IllegalArgumentException("control endpoint " + e + ": the gRPC control plane runs on"
                    + " HOST:PORT (TCP), rdma://HOST:PORT or tcp://HOST:PORT, not on " + e.scheme() + "://");
        }
    }

    /**
     * Defaults for the rest: 1k keys, 64 MiB pool, 1 MiB values, 256 sessions, 10 s to attach, AUTO transfer, one
     * event loop spinning 50us when idle, no limit on control-plane connections.
     */
    public static KvServerConfig of(String listenHost, int listenPort, Endpoint dataEndpoint) {
        return new KvServerConfig(listenHost, listenPort, dataEndpoint, 64L << 20, 1L << 20, 1024, 256,
                Duration.ofSeconds(10), ValueTransfer.AUTO, 1, DEFAULT_LOOP_SPIN, null, Integer.MAX_VALUE);
    }

    public KvServerConfig withMemory(long bytes, long maxValue) {
        return new KvServerConfig(listenHost, listenPort, dataEndpoint, bytes, maxValue, maxKeyBytes, maxSessions,
                attachTimeout, valueTransfer, loops, loopSpin, controlEndpoint, maxControlConnections);
    }

    public KvServerConfig withLimits(int maxKey, int sessions, Duration attach) {
        return new KvServerConfig(listenHost, listenPort, dataEndpoint, memoryBytes, maxValueBytes, maxKey, sessions,
                attach, valueTransfer, loops, loopSpin, controlEndpoint, maxControlConnections);
    }

    public KvServerConfig withValueTransfer(ValueTransfer transfer) {
        return new KvServerConfig(listenHost, listenPort, dataEndpoint, memoryBytes, maxValueBytes, maxKeyBytes,
                maxSessions, attachTimeout, transfer, loops, loopSpin, controlEndpoint, maxControlConnections);
    }

    public KvServerConfig withLoops(int n) {
        return new KvServerConfig(listenHost, listenPort, dataEndpoint, memoryBytes, maxValueBytes, maxKeyBytes,
                maxSessions, attachTimeout, valueTransfer, n, loopSpin, controlEndpoint, maxControlConnections);
    }

    public KvServerConfig withLoopSpin(Duration spin) {
        return new KvServerConfig(listenHost, listenPort, dataEndpoint, memoryBytes, maxValueBytes, maxKeyBytes,
                maxSessions, attachTimeout, valueTransfer, loops, spin, controlEndpoint, maxControlConnections);
    }

    /**
     * The control plane on an {@code rdma://} or {@code tcp://} endpoint (its host and port become the listen
     * address): gRPC on the project's communicators instead of TCP.
     */
    public KvServerConfig withControlEndpoint(Endpoint e) {
        return new KvServerConfig(e.host(), e.port(), dataEndpoint, memoryBytes, maxValueBytes, maxKeyBytes,
                maxSessions, attachTimeout, valueTransfer, loops, loopSpin, e, maxControlConnections);
    }

    /** At most {@code n} control-plane connections at once (see {@link #maxControlConnections()}). */
    public KvServerConfig withMaxControlConnections(int n) {
        return new KvServerConfig(listenHost, listenPort, dataEndpoint, memoryBytes, maxValueBytes, maxKeyBytes,
                maxSessions, attachTimeout, valueTransfer, loops, loopSpin, controlEndpoint, n);
    }

    /** Whether values travel inside the data plane's messages rather than one-sided. */
    boolean inlineValues() {
        return valueTransfer.inlineOn(dataEndpoint);
    }
}
