package io.rdmacomm.session;

import io.rdmacomm.collectives.PeerGroup;
import io.rdmacomm.session.routine.RoutineRegistry;
import java.time.Duration;

/**
 * What the exchanges of a server are configured with, validated once.
 *
 * @param regionSize bytes of the region {@link Exchange#WRITE} and {@link Exchange#READ} register per session
 * @param maxGroupSize the most clients a group of {@link Exchange#ALLTOALL} or {@link Exchange#BROADCAST} may have
 * @param groupTimeout how long a group may take to fill, from its first member's arrival
 * @param routines what {@link Exchange#CALL} can run
 */
public record ExchangeSettings(int regionSize, int maxGroupSize, Duration groupTimeout, RoutineRegistry routines) {
    /** The default region size: 1 MiB. */
    public static final int DEFAULT_REGION_SIZE = 1 << 20;
    /** The default group timeout: 30 s. */
    public static final Duration DEFAULT_GROUP_TIMEOUT = Duration.ofSeconds(30);

    public ExchangeSettings {
        if (regionSize < 1) {
            throw new IllegalArgumentException("region size must be at least 1 byte, got " + regionSize);
        }
        if (maxGroupSize < 1 || maxGroupSize > 0xffff) {
            throw new IllegalArgumentException("max group size must be 1 to 65535, got " + maxGroupSize);
        }
        if (groupTimeout.isNegative() || groupTimeout.isZero()) {
            throw new IllegalArgumentException("group timeout must be positive, got " + groupTimeout);
        }
    }

    /** 1 MiB regions, groups of at most {@link PeerGroup#DEFAULT_MAX_PEERS}, 30 s group timeout, the built-ins. */
    public static ExchangeSettings defaults() {
        return new ExchangeSettings(DEFAULT_REGION_SIZE, PeerGroup.DEFAULT_MAX_PEERS, DEFAULT_GROUP_TIMEOUT,
                RoutineRegistry.builtins());
    }
}
