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
 * @param maxCallInput the largest routine input a {@link Exchange#CALL} may declare (at most
 *     {@link SessionProtocol#MAX_CALL_INPUT}); the server holds only what has arrived, never the declared size
 * @param routineTimeout how long one routine may run before it is interrupted and the call fails
 * @param idleTimeout how long a session may leave the server waiting on it (blocked reading from, or writing to,
 *     the client) before it is closed; zero waits for ever
 */
public record ExchangeSettings(int regionSize, int maxGroupSize, Duration groupTimeout, RoutineRegistry routines,
        int maxCallInput, Duration routineTimeout, Duration idleTimeout) {
    /** The default region size: 1 MiB. */
    public static final int DEFAULT_REGION_SIZE = 1 << 20;
    /** The default group timeout: 30 s. */
    public static final Duration DEFAULT_GROUP_TIMEOUT = Duration.ofSeconds(30);
    /** The default routine time limit: 30 s. */
    public static final Duration DEFAULT_ROUTINE_TIMEOUT = Duration.ofSeconds(30);
    /** The default idle timeout of a session: 60 s. */
    public static final Duration DEFAULT_IDLE_TIMEOUT = Duration.ofSeconds(60);

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
        if (maxCallInput < 0 || maxCallInput > SessionProtocol.MAX_CALL_INPUT) {
            throw new IllegalArgumentException("max call input must be 0 to " + SessionProtocol.MAX_CALL_INPUT
                    + " bytes, got " + maxCallInput);
        }
        if (routineTimeout.isNegative() || routineTimeout.isZero()) {
            throw new IllegalArgumentException("routine timeout must be positive, got " + routineTimeout);
        }
        if (idleTimeout.isNegative()) {
            throw new IllegalArgumentException("idle timeout must not be negative, got " + idleTimeout);
        }
    }

    /** The given exchange settings with the default call limits and idle timeout. */
    public ExchangeSettings(int regionSize, int maxGroupSize, Duration groupTimeout, RoutineRegistry routines) {
        this(regionSize, maxGroupSize, groupTimeout, routines, SessionProtocol.MAX_CALL_INPUT,
                DEFAULT_ROUTINE_TIMEOUT, DEFAULT_IDLE_TIMEOUT);
    }

    /** 1 MiB regions, groups of at most {@link PeerGroup#DEFAULT_MAX_PEERS}, 30 s group timeout, the built-ins. */
    public static ExchangeSettings defaults() {
        return new ExchangeSettings(DEFAULT_REGION_SIZE, PeerGroup.DEFAULT_MAX_PEERS, DEFAULT_GROUP_TIMEOUT,
                RoutineRegistry.builtins());
    }
}
