package io.rdmacomm.tcp;

import io.rdmacomm.api.Endpoint;
import io.rdmacomm.api.EndpointOption;
import io.rdmacomm.api.Units;
import io.rdmacomm.api.auth.SharedSecret;
import io.rdmacomm.api.support.Liveness;
import java.time.Duration;

/**
 * An endpoint's options, read once so the I/O paths never parse or box. Durations in nanoseconds; {@code secret}
 * is null when the endpoint names none, {@code tls} when TLS is off; {@code liveness} is 0 on the raw wire, which has no
 * room for heartbeats.
 */
record Settings(long connectTimeout, long acceptTimeout, long readTimeout, long handshakeTimeout, int sendBuffer,
        long busyPoll, long maxRegistered, SharedSecret secret, TlsConfig tls, long liveness) {

    static Settings of(Endpoint e) {
        return new Settings(nanos(e, EndpointOption.CONNECT_TIMEOUT), nanos(e, EndpointOption.ACCEPT_TIMEOUT),
                nanos(e, EndpointOption.READ_TIMEOUT), nanos(e, EndpointOption.HANDSHAKE_TIMEOUT),
                e.intSize(EndpointOption.SEND_BUFFER), nanos(e, EndpointOption.BUSY_POLL),
                e.size(EndpointOption.MAX_REGISTERED), SharedSecret.of(e).orElse(null), TlsConfig.of(e),
                e.string(EndpointOption.WIRE).equals("raw") ? 0 : nanos(e, EndpointOption.LIVENESS));
    }

    /** Longer than any wait; small enough that {@code System.nanoTime() + FOREVER} cannot overflow. */
    static final long FOREVER = Long.MAX_VALUE / 4;

    private static long nanos(Endpoint e, EndpointOption o) {
        Duration d = e.duration(o);
        try {
            return Math.min(d.toNanos(), FOREVER);
        } catch (ArithmeticException tooLong) {
            return FOREVER;
        }
    }

    /**
     * Plain blocking channel reads are the fastest path, and need no selector; timed or spinning reads need a
     * non-blocking channel. Liveness does not: its silence closes the socket, which ends blocking waits, and its
     * heartbeats on a blocking channel go out on a thread of their own (see {@code TcpConnection}).
     */
    boolean blockingChannel() {
        return readTimeout == 0 && busyPoll == 0;
    }

    /** What our handshake asks of the peer: heartbeats at a third of our liveness, or none when it is off. */
    short heartbeatBits() {
        return Handshake.heartbeatBits(Liveness.heartbeatPeriod(liveness));
    }

    static String format(long nanos) {
        return Units.formatDuration(Duration.ofNanos(nanos));
    }
}
