package io.rdmacomm.tcp;

import io.rdmacomm.api.support.DescriptorBudget;
import java.util.concurrent.TimeUnit;

/**
 * How many peers a {@link TcpServer} may hold in handshake while the process is at its descriptor limit. Once an
 * accept failed for want of descriptors ({@link #outOfDescriptors}) the cap is {@link #HEADROOM} fewer than were in
 * handshake; from then on the descriptors in use are counted every {@link #PRESSURE_RECHECK_NANOS} and the cap lets
 * as many peers handshake as leave {@link #HEADROOM} free, until plenty are free again and the cap is lifted. Only the
 * server's accept thread uses it.
 */
final class DescriptorPressure {
    /** Descriptors kept free for the application while the process is at its descriptor limit. */
    static final int HEADROOM = 32;
    /** How often the descriptors in use are counted again while the process is at its limit. */
    private static final long PRESSURE_RECHECK_NANOS = TimeUnit.SECONDS.toNanos(1);

    /** While the process is at its descriptor limit: peers in handshake at most; else {@code MAX_VALUE}. */
    private int descriptorCap = Integer.MAX_VALUE;
    /** When to count descriptors again while {@link #descriptorCap} holds. */
    private long descriptorRecheckAt;

    /** Peers in handshake at most now ({@code MAX_VALUE} while the process is not at its descriptor limit). */
    int cap() {
        return descriptorCap;
    }

    /** Descriptors ran out with {@code inHandshake} peers in handshake: from now on hold {@link #HEADROOM} fewer. */
    void outOfDescriptors(int inHandshake, long now) {
        descriptorCap = Math.max(1, inHandshake - HEADROOM);
        descriptorRecheckAt = now + PRESSURE_RECHECK_NANOS;
    }

    /**
     * While the process is at its descriptor limit, counts the descriptors in use every
     * {@link #PRESSURE_RECHECK_NANOS} and lets as many peers handshake as leave {@link #HEADROOM} free, with
     * {@code inHandshake} in handshake now; ends that when plenty are free again. Returns the select timeout in ms
     * until the next count (0: none).
     */
    long check(int inHandshake, long now) {
        if (descriptorCap == Integer.MAX_VALUE) {
            return 0;
        }
        long left = descriptorRecheckAt - now;
        if (left > 0) {
            return TcpServer.millisUntil(left);
        }
        long limit = DescriptorBudget.limit();
        long inUse = DescriptorBudget.inUse();
        long free = limit < 0 || inUse < 0 ? Long.MAX_VALUE : limit - inUse;
        if (free >= 4L * HEADROOM) {
            descriptorCap = Integer.MAX_VALUE;
            return 0;
        }
        descriptorCap = (int) Math.max(1, Math.min(Integer.MAX_VALUE, inHandshake + free - HEADROOM));
        descriptorRecheckAt = now + PRESSURE_RECHECK_NANOS;
        return TcpServer.millisUntil(PRESSURE_RECHECK_NANOS);
    }
}
