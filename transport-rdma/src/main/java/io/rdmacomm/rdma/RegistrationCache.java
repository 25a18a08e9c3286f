package io.rdmacomm.rdma;

import io.rdmacomm.api.Access;
import io.rdmacomm.rdma.spi.LocalRegion;
import io.rdmacomm.rdma.spi.RdmaChannel;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.EnumSet;
import java.util.IdentityHashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Registrations of application buffers used for zero-copy (advertised read buffers, sources of direct writes and
 * puts), keyed by buffer identity. An entry holds the buffer strongly, so its memory cannot be freed and reused
 * while registered; least recently used, unpinned entries are dropped when the connection's budget is reached.
 */
final class RegistrationCache implements AutoCloseable {
    /** A cached registration; pinned while an operation uses it. */
    static final class Entry {
        final ByteBuffer buffer;
        final LocalRegion region;
        int pins;

        Entry(ByteBuffer buffer, LocalRegion region) {
            this.buffer = buffer;
            this.region = region;
        }
    }

    private final RdmaChannel channel;
    private final Budget budget;
    private final Map<ByteBuffer, Entry> byBuffer = new IdentityHashMap<>();
    private final LinkedHashMap<Entry, Boolean> lru = new LinkedHashMap<>(16, 0.75f, true);
    private boolean closed;

    RegistrationCache(RdmaChannel channel, Budget budget) {
        this.channel = channel;
        this.budget = budget;
    }

    /**
     * The pinned registration of {@code buffer} (direct), registering it if needed; null if the budget cannot
     * make room, in which case the caller takes a copying path.
     */
    synchronized Entry acquire(ByteBuffer buffer) throws IOException {
        if (closed) {
            return null;
        }
        Entry e = byBuffer.get(buffer);
        if (e == null) {
            long size = buffer.capacity();
            while (!budget.tryReserve(size)) {
                if (!evictOne()) {
                    return null;
                }
            }
            LocalRegion region;
            try {
                region = channel.register(buffer, EnumSet.of(Access.REMOTE_WRITE));
            } catch (IOException | RuntimeException ex) {
                budget.release(size);
                throw ex;
            }
            e = new Entry(buffer, region);
            byBuffer.put(buffer, e);
        }
        lru.put(e, Boolean.TRUE);
        e.pins++;
        return e;
    }

    synchronized void release(Entry e) {
        e.pins--;
        if (closed && e.pins == 0) {
            drop(e);
        }
    }

    private boolean evictOne() {
        Iterator<Entry> it = lru.keySet().iterator();
        while (it.hasNext()) {
            Entry e = it.next();
            if (e.pins == 0) {
                it.remove();
                byBuffer.remove(e.buffer);
                e.region.close();
                budget.release(e.buffer.capacity());
                return true;
            }
        }
        return false;
    }

    private void drop(Entry e) {
        if (byBuffer.remove(e.buffer) != null) {
            lru.remove(e);
            e.region.close();
            budget.release(e.buffer.capacity());
        }
    }

    /** Deregisters every entry; entries still pinned go when released. */
    @Override
    public synchronized void close() {
        closed = true;
        for (Entry e : byBuffer.values().toArray(new Entry[0])) {
            if (e.pins == 0) {
                drop(e);
            }
        }
    }
}
