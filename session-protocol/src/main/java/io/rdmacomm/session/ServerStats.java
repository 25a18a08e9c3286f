package io.rdmacomm.session;

import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.CommunicatorException;
import io.rdmacomm.api.RegisteredMemory;
import java.io.IOException;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.OptionalLong;

/**
 * What a server reports about itself in the {@link Exchange#STATS} exchange: named counters in the server's order.
 * A {@link SessionServer} reports
 * <pre>
 * sessions         sessions being served now, the STATS session that asks included
 * sessionsServed   sessions accepted since the server started (refused ones left out)
 * maxSessions      the server's limit of sessions at once
 * regions          memory regions the server process holds registered now, every transport ({@link RegisteredMemory})
 * regionBytes      their bytes
 * regions.NAME     the same per transport that has registered anything in the process (tcp, ucx-jucx, ucx-ffm,
 * regionBytes.NAME verbs, local)
 * </pre>
 * A client prints what it gets and looks up what it knows, so a later server may add counters. Names are
 * {@link SessionProtocol#isValidName valid names}. Immutable.
 *
 * <p>Wire (the body of the exchange's result): {@code short count | count x (byte name length | name (ASCII) | long
 * value)}, at most {@link #MAX_ENTRIES} entries, no name twice, nothing after the last.
 */
public final class ServerStats {
    /** The most counters a report carries: 64 entries of the longest name fit {@link SessionProtocol#MAX_RESULT_BODY}. */
    public static final int MAX_ENTRIES = 64;

    private final Map<String, Long> values;

    private ServerStats(Map<String, Long> values) {
        this.values = Collections.unmodifiableMap(values);
    }

    /** Collects counters in the order they are put. */
    public static final class Builder {
        private final LinkedHashMap<String, Long> values = new LinkedHashMap<>();

        private Builder() {
        }

        /**
         * Adds a counter.
         *
         * @throws IllegalArgumentException if the name is invalid or taken, or the report is full
         */
        public Builder put(String name, long value) {
            if (!SessionProtocol.isValidName(name)) {
                throw new IllegalArgumentException("invalid counter name '" + name + "': 1 to "
                        + SessionProtocol.MAX_NAME_LENGTH + " letters, digits, '.', '_' or '-'");
            }
            if (values.containsKey(name)) {
                throw new IllegalArgumentException("counter '" + name + "' is reported twice");
            }
            if (values.size() == MAX_ENTRIES) {
                throw new IllegalArgumentException("a report holds at most " + MAX_ENTRIES + " counters");
            }
            values.put(name, value);
            return this;
        }

        /**
         * Adds what this process holds registered ({@link RegisteredMemory}): {@code regions}, {@code regionBytes},
         * then both per transport, as many transports as fit.
         */
        public Builder putRegisteredMemory() {
            RegisteredMemory.Usage total = RegisteredMemory.total();
            put("regions", total.regions());
            put("regionBytes", total.bytes());
            for (Map.Entry<String, RegisteredMemory.Usage> t : RegisteredMemory.byTransport().entrySet()) {
                String regions = "regions." + t.getKey();
                String bytes = "regionBytes." + t.getKey();
                if (values.size() + 2 <= MAX_ENTRIES && SessionProtocol.isValidName(bytes)) {
                    put(regions, t.getValue().regions());
                    put(bytes, t.getValue().bytes());
                }
            }
            return this;
        }

        public ServerStats build() {
            return new ServerStats(new LinkedHashMap<>(values));
        }
    }

    public static Builder builder() {
        return new Builder();
    }

    /** The counters in the server's order. */
    public Map<String, Long> values() {
        return values;
    }

    /** The counter {@code name}, if the server reported it. */
    public OptionalLong get(String name) {
        Long v = values.get(name);
        return v == null ? OptionalLong.empty() : OptionalLong.of(v);
    }

    /** The report as it goes on the wire. */
    public ByteBuffer encode() {
        int length = 2;
        for (String name : values.keySet()) {
            length += 1 + name.length() + 8;
        }
        ByteBuffer b = ByteBuffer.allocate(length).putShort((short) values.size());
        values.forEach((name, value) -> b.put((byte) name.length()).put(name.getBytes(StandardCharsets.US_ASCII))
                .putLong(value));
        return b.flip();
    }

    /**
     * Reads a report from the whole of {@code body}.
     *
     * @throws CommunicatorException if the body is not one: too many entries, a bad or repeated name, cut short or
     *     followed by more bytes
     */
    public static ServerStats decode(ByteBuffer body) throws CommunicatorException {
        ByteBuffer b = body.duplicate();
        try {
            int count = Short.toUnsignedInt(b.getShort());
            if (count > MAX_ENTRIES) {
                throw new CommunicatorException("server stats announce " + count + " counters, more than the limit of "
                        + MAX_ENTRIES);
            }
            LinkedHashMap<String, Long> values = new LinkedHashMap<>();
            for (int i = 0; i < count; i++) {
                int n = Byte.toUnsignedInt(b.get());
                if (n < 1 || n > SessionProtocol.MAX_NAME_LENGTH) {
                    throw new CommunicatorException("server stats counter " + i + " has a name of " + n
                            + " bytes; 1 to " + SessionProtocol.MAX_NAME_LENGTH + " are allowed");
                }
                byte[] name = new byte[n];
                b.get(name);
                String text = new String(name, StandardCharsets.US_ASCII);
                if (!SessionProtocol.isValidName(text)) {
                    throw new CommunicatorException("server stats counter " + i + " has an invalid name (letters,"
                            + " digits, '.', '_' or '-' only)");
                }
                if (values.put(text, b.getLong()) != null) {
                    throw new CommunicatorException("server stats name the counter '" + text + "' twice");
                }
            }
            if (b.hasRemaining()) {
                throw new CommunicatorException("server stats of " + count + " counters are followed by "
                        + b.remaining() + " more bytes");
            }
            return new ServerStats(values);
        } catch (BufferUnderflowException e) {
            throw new CommunicatorException("server stats cut short: " + body.remaining() + " bytes end inside an"
                    + " entry");
        }
    }

    /**
     * The client side after the session was accepted ({@link SessionClient#open} of {@link SessionRequest#stats()}):
     * reads the server's result and the report in it.
     *
     * @throws SessionException if the server answered with an error
     * @throws CommunicatorException if the report is malformed
     */
    public static ServerStats read(Communicator peer) throws IOException {
        return decode(ExchangeResult.expectOk(peer, "stats").body());
    }

    /** One line, {@code name=value} separated by single spaces, in the server's order: what clientcomm prints. */
    public String toLine() {
        StringBuilder sb = new StringBuilder();
        values.forEach((name, value) -> sb.append(sb.length() == 0 ? "" : " ").append(name).append('=').append(value));
        return sb.toString();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ServerStats s && s.values.equals(values);
    }

    @Override
    public int hashCode() {
        return values.hashCode();
    }

    @Override
    public String toString() {
        return toLine();
    }
}
