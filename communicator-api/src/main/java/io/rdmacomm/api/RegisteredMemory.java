package io.rdmacomm.api;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The memory this process has registered and not yet released, per transport and in total: how many regions and how
 * many bytes. A transport counts where it registers and deregisters (tcp:// its emulated regions; rdma:// each
 * provider's registrations, receive rings and staging buffers included; local:// its regions), so a server can show
 * that what dead peers held was given back. The counters change only on registration and release, never per
 * message. Thread-safe; a snapshot reads regions and bytes one after the other, so while registrations come and go it
 * may pair a count with the bytes of a moment later.
 */
public final class RegisteredMemory {
    private static final ConcurrentHashMap<String, Counter> COUNTERS = new ConcurrentHashMap<>();

    private RegisteredMemory() {
    }

    /** Live regions and their bytes. */
    public record Usage(long regions, long bytes) {
        /** Nothing registered. */
        public static final Usage NONE = new Usage(0, 0);

        Usage plus(Usage other) {
            return new Usage(regions + other.regions, bytes + other.bytes);
        }
    }

    /**
     * The counter of {@code transport} ({@code "tcp"}, {@code "ucx-jucx"}, ...), the same instance for the same name
     * for the life of the process; a transport looks it up once and keeps it.
     */
    public static Counter counter(String transport) {
        return COUNTERS.computeIfAbsent(transport, Counter::new);
    }

    /** What every transport of this process holds now. */
    public static Usage total() {
        Usage sum = Usage.NONE;
        for (Counter c : COUNTERS.values()) {
            sum = sum.plus(c.usage());
        }
        return sum;
    }

    /** What each transport that has a counter holds now, by name in alphabetical order. */
    public static Map<String, Usage> byTransport() {
        Map<String, Usage> all = new TreeMap<>();
        COUNTERS.forEach((name, c) -> all.put(name, c.usage()));
        return all;
    }

    /**
     * One transport's live registrations. Each successful registration is matched by exactly one release of the same
     * length, however often the region is closed.
     */
    public static final class Counter {
        private final String transport;
        private final AtomicLong regions = new AtomicLong();
        private final AtomicLong bytes = new AtomicLong();

        private Counter(String transport) {
            this.transport = transport;
        }

        public String transport() {
            return transport;
        }

        /** A region of {@code length} bytes was registered. */
        public void registered(long length) {
            regions.incrementAndGet();
            bytes.addAndGet(length);
        }

        /** A region of {@code length} bytes, counted by {@link #registered}, was released. */
        public void released(long length) {
            regions.decrementAndGet();
            bytes.addAndGet(-length);
        }

        /** What this transport holds now. */
        public Usage usage() {
            return new Usage(regions.get(), bytes.get());
        }

        @Override
        public String toString() {
            Usage u = usage();
            return transport + ": " + u.regions() + " regions, " + u.bytes() + " bytes";
        }
    }
}
