package io.rdmacomm.kvstore;

import io.rdmacomm.api.support.FieldHandles;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * The keys and their values in the memory pool. Values are copy-on-write: a PUT fills a fresh block
 * ({@link #reserve}, then the caller moves the bytes in, then {@link #install}) and only then swaps it in, so a
 * GET that {@link #pin pinned} the old value keeps reading intact bytes; a block goes back to the allocator when
 * its last holder lets go (the map's reference, dropped by an overwrite or delete, and each reader's pin).
 */
final class Store {
    private final ByteBuffer pool;
    private final Allocator allocator;
    private final ConcurrentHashMap<Key, Value> map = new ConcurrentHashMap<>();
    private final AtomicLong versions = new AtomicLong();
    private final AtomicLong valueBytes = new AtomicLong();
    final LongAdder gets = new LongAdder();
    final LongAdder puts = new LongAdder();
    final LongAdder deletes = new LongAdder();
    final LongAdder misses = new LongAdder();
    final LongAdder errors = new LongAdder();

    /** A stored value: its block in the pool and a reference count (the map's, plus one per pinning reader). */
    static final class Value {
        private static final VarHandle REFS = FieldHandles.of(MethodHandles.lookup(), "refs", int.class);

        final Key key;
        final int offset;
        final int length;
        final long version;
        @SuppressWarnings("unused") // through REFS
        private volatile int refs = 1;

        Value(Key key, int offset, int length, long version) {
            this.key = key;
            this.offset = offset;
            this.length = length;
            this.version = version;
        }

        private boolean tryPin() {
            for (;;) {
                int r = (int) REFS.getVolatile(this);
                if (r == 0) {
                    return false;
                }
                if (REFS.compareAndSet(this, r, r + 1)) {
                    return true;
                }
            }
        }

        /** Drops one reference; true when it was the last. */
        private boolean unpin() {
            return (int) REFS.getAndAdd(this, -1) == 1;
        }
    }

    Store(ByteBuffer pool) {
        this.pool = pool;
        this.allocator = new Allocator(pool);
    }

    /** The largest value the pool could ever hold. */
    int maxValue() {
        return allocator.maxPayload();
    }

    /**
     * The current value of the key, pinned so its block stays intact until {@link #unpin}; null if the key is
     * not stored.
     */
    Value pin(Key.Probe key) {
        for (;;) {
            Value v = map.get(key);
            if (v == null || v.tryPin()) {
                return v;
            }
            // v was replaced and released between the lookup and the pin: look again
        }
    }

    void unpin(Value v) {
        if (v.unpin()) {
            free(v);
        }
    }

    /** A fresh block for a value of {@code length} bytes: its offset in the pool. */
    int reserve(int length) throws KvException {
        int offset = allocator.allocate(length);
        if (offset < 0) {
            throw new KvException(KvException.Code.POOL_FULL, "the server's memory pool is full: no free block"
                    + " holds " + length + " bytes (" + allocator.freeBytes() + " bytes free, largest block "
                    + allocator.largestFreePayload() + ")");
        }
        return offset;
    }

    /** Returns a block from {@link #reserve} that was never installed. */
    void abandon(int offset) {
        allocator.free(offset);
    }

    /**
     * Makes the block at {@code offset} (from {@link #reserve}, filled) the key's value and releases the value it
     * replaces; returns the new version.
     */
    long install(Key.Probe key, int offset, int length) {
        long version = versions.incrementAndGet();
        valueBytes.addAndGet(length);
        for (;;) {
            Value old = map.get(key);
            if (old != null) {
                if (map.replace(old.key, old, new Value(old.key, offset, length, version))) {
                    unpin(old);
                    return version;
                }
            } else {
                Key k = key.toKey();
                if (map.putIfAbsent(k, new Value(k, offset, length, version)) == null) {
                    return version;
                }
            }
        }
    }

    /** Removes the key; false if it was not stored. */
    boolean remove(Key.Probe key) {
        for (;;) {
            Value old = map.get(key);
            if (old == null) {
                return false;
            }
            if (map.remove(old.key, old)) {
                unpin(old);
                return true;
            }
        }
    }

    /** Removes every key; returns how many. */
    long clear() {
        long removed = 0;
        for (var e : map.entrySet()) {
            if (map.remove(e.getKey(), e.getValue())) {
                unpin(e.getValue());
                removed++;
            }
        }
        return removed;
    }

    /** A view of the pool's bytes of {@code v}, or of a reserved block, for one caller's exclusive use. */
    ByteBuffer slice(ByteBuffer view, int offset, int length) {
        return view.clear().limit(offset + length).position(offset);
    }

    /** A view of the whole pool for one thread ({@link #slice} moves its position and limit). */
    ByteBuffer view() {
        return pool.duplicate();
    }

    private void free(Value v) {
        valueBytes.addAndGet(-v.length);
        allocator.free(v.offset);
    }

    long keys() {
        return map.size();
    }

    long valueBytes() {
        return valueBytes.get();
    }

    Allocator allocator() {
        return allocator;
    }
}
