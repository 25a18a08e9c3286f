package io.rdmacomm.tcp;

import io.rdmacomm.api.Access;
import io.rdmacomm.api.CommunicatorException;
import io.rdmacomm.api.MemoryRegion;
import io.rdmacomm.api.RegionDescriptor;
import io.rdmacomm.api.RegisteredMemory;
import io.rdmacomm.api.RemoteAccessException;
import io.rdmacomm.api.Units;
import io.rdmacomm.api.support.FieldHandles;
import io.rdmacomm.api.support.Waiter;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.channels.AsynchronousCloseException;
import java.security.SecureRandom;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * One connection's registered regions (the target side) and its one-sided operations in flight (the
 * initiator side). A region is found by its key, a random 64-bit token, so a peer cannot guess its way into
 * memory it was not given; the descriptor's address is the region's serial number, for messages only.
 */
final class RemoteMemory {
    private static final SecureRandom RANDOM = new SecureRandom();
    /** The process's count of tcp:// regions: a region counts from its registration to its close. */
    private static final RegisteredMemory.Counter LIVE = RegisteredMemory.counter("tcp");

    private final Supplier<String> peer;
    private final long maxRegistered;
    private final ConcurrentHashMap<Long, Region> regions = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<Long, Op> ops = new ConcurrentHashMap<>();
    private final AtomicLong registered = new AtomicLong();
    private final AtomicLong serials = new AtomicLong();
    private final AtomicLong opIds = new AtomicLong();
    private final Waiter waiter;
    private volatile IOException failure;
    /** {@link #failure} of a connection closed by this side: each caller is thrown a fresh exception of its own. */
    private static final IOException CLOSED = new AsynchronousCloseException();
    /** {@link #failure}, set once: the first failure is the one every later caller is told. */
    private static final VarHandle FAILURE = FieldHandles.of(MethodHandles.lookup(), "failure", IOException.class);

    /**
     * @param spinNanos how long a thread waiting for an answer spins before it parks (the connection's busy polling)
     */
    RemoteMemory(Supplier<String> peer, long maxRegistered, long spinNanos) {
        this.peer = peer;
        this.maxRegistered = maxRegistered;
        // a close fails every operation in flight (fail), which ends their waits
        this.waiter = new Waiter(spinNanos, null, () -> false, () -> "on " + peer.get());
    }

    /** Registers a direct buffer for {@code access} (the communicator checked both). */
    MemoryRegion register(ByteBuffer buffer, Set<Access> access) throws IOException {
        IOException failed = failure;
        if (failed != null) {
            throw thrown(failed);
        }
        ByteBuffer memory = buffer.slice();
        long length = memory.capacity();
        long total = registered.addAndGet(length);
        if (total > maxRegistered) {
            registered.addAndGet(-length);
            throw new CommunicatorException("registering " + Units.formatSize(length) + " with " + peer.get()
                    + " would exceed maxRegistered=" + Units.formatSize(maxRegistered) + " ("
                    + Units.formatSize(total - length) + " already registered)");
        }
        long key;
        Region region;
        do {
            key = RANDOM.nextLong();
            region = new Region(serials.incrementAndGet(), key, memory, access);
        } while (regions.putIfAbsent(key, region) != null);
        LIVE.registered(length);
        return region;
    }

    /**
     * Why a remote access of {@code count} bytes at {@code offset} of region {@code key} is refused, or null.
     */
    String refusal(long key, long offset, long count, Access needed) {
        Region r = regions.get(key);
        if (r == null) {
            return "no region with key " + Long.toHexString(key) + " is registered (unknown or deregistered)";
        }
        if (!r.access.contains(needed)) {
            return "region " + r.serial + " does not allow " + needed + " (granted " + r.access + ")";
        }
        long length = r.memory.capacity();
        if (offset < 0 || count < 0 || offset > length || count > length - offset) {
            return "access of " + count + " bytes at offset " + offset + " is out of bounds of region " + r.serial
                    + " (length " + length + ")";
        }
        return null;
    }

    /**
     * The bytes of a region an accepted access may touch (check {@link #refusal} first), or null if the region was
     * deregistered since.
     */
    ByteBuffer window(long key, long offset, int count) {
        Region r = regions.get(key);
        if (r == null) {
            return null;
        }
        ByteBuffer w = r.memory.duplicate();
        w.limit((int) offset + count).position((int) offset);
        return w;
    }

    /** The 64-bit key of a descriptor made by this transport. */
    static long keyOf(RegionDescriptor d) throws RemoteAccessException {
        byte[] key = d.key();
        if (key.length != 8) {
            throw new RemoteAccessException("region " + d + " is not a tcp:// region: its key has " + key.length
                    + " bytes, a tcp key has 8");
        }
        return ByteBuffer.wrap(key).getLong();
    }

    Op begin(ByteBuffer dst) throws IOException {
        IOException failed = failure;
        if (failed != null) {
            throw thrown(failed);
        }
        Op op = new Op(opIds.incrementAndGet(), dst);
        ops.put(op.id, op);
        failed = failure;
        if (failed != null) {
            ops.remove(op.id);
            throw thrown(failed);
        }
        return op;
    }

    /** Takes an operation for completion; null if unknown or abandoned by its caller. */
    Op claim(long id) {
        Op op = ops.remove(id);
        return op != null && op.state.compareAndSet(Op.WAITING, Op.CLAIMED) ? op : null;
    }

    /** No further operations can complete: fail those in flight and refuse new ones. */
    void fail(IOException e) {
        FAILURE.compareAndSet(this, null, e);
        failInFlight(e);
    }

    /**
     * This side closed the connection: every operation in flight and every later one fails with an
     * {@link AsynchronousCloseException} made where it is thrown (so a close makes none: a close with an exception
     * of its own cost each connection a stack walk).
     */
    void failClosed() {
        FAILURE.compareAndSet(this, null, CLOSED);
        failInFlight(CLOSED); // Op.await throws a fresh one for it
    }

    /** What a caller is thrown for {@code failed}: a fresh exception for {@link #CLOSED}, else the failure itself. */
    private static IOException thrown(IOException failed) {
        return failed == CLOSED ? new AsynchronousCloseException() : failed;
    }

    private void failInFlight(IOException e) {
        for (Op op : ops.values()) {
            Op claimed = claim(op.id);
            if (claimed != null) {
                claimed.finish(null, e);
            }
        }
    }

    void deregisterAll() {
        for (Region r : regions.values()) {
            r.close();
        }
    }

    /** A one-sided operation awaiting its ACK, GET_RESPONSE or ERROR; as a condition, whether it finished. */
    final class Op implements BooleanSupplier {
        static final int WAITING = 0;
        static final int CLAIMED = 1;
        static final int ABANDONED = 2;

        final long id;
        /** Where a GET's bytes go; null for a PUT. */
        final ByteBuffer dst;
        final AtomicInteger state = new AtomicInteger(WAITING);
        private volatile boolean done;
        private volatile String refused;
        private volatile IOException failed;

        Op(long id, ByteBuffer dst) {
            this.id = id;
            this.dst = dst;
        }

        /** Completes a claimed operation: success if both are null. */
        void finish(String refusedBy, IOException failure) {
            refused = refusedBy;
            failed = failure;
            done = true;
            waiter.wake();
        }

        @Override
        public boolean getAsBoolean() {
            return done;
        }

        void await(long timeoutNanos, String what) throws IOException {
            try {
                waiter.await(this, Waiter.deadlineAfter(timeoutNanos), what);
            } catch (SocketTimeoutException e) {
                if (state.compareAndSet(WAITING, ABANDONED)) {
                    ops.remove(id);
                    throw new SocketTimeoutException(what + " on " + peer.get() + " got no answer within "
                            + Settings.format(timeoutNanos) + " (readTimeout)");
                }
                waiter.await(this, Waiter.NO_DEADLINE, what); // claimed: the progress thread is filling dst now
            } catch (InterruptedIOException e) {
                if (state.compareAndSet(WAITING, ABANDONED)) {
                    ops.remove(id);
                }
                throw new InterruptedIOException(what + " on " + peer.get() + " interrupted");
            }
            if (failed != null) {
                if (failed instanceof AsynchronousCloseException) {
                    throw new AsynchronousCloseException();
                }
                throw new CommunicatorException(what + " on " + peer.get() + " failed: " + failed.getMessage(),
                        failed);
            }
            if (refused != null) {
                throw new RemoteAccessException(what + " refused by " + peer + ": " + refused);
            }
        }
    }

    private final class Region implements MemoryRegion {
        final long serial;
        final long key;
        final ByteBuffer memory;
        final Set<Access> access;
        private final RegionDescriptor descriptor;

        Region(long serial, long key, ByteBuffer memory, Set<Access> access) {
            this.serial = serial;
            this.key = key;
            this.memory = memory;
            this.access = Set.copyOf(access);
            this.descriptor = new RegionDescriptor(serial, memory.capacity(), access,
                    ByteBuffer.allocate(8).putLong(key).array());
        }

        @Override
        public ByteBuffer buffer() {
            return memory.duplicate();
        }

        @Override
        public RegionDescriptor descriptor() {
            return descriptor;
        }

        @Override
        public void close() {
            if (regions.remove(key, this)) {
                registered.addAndGet(-memory.capacity());
                LIVE.released(memory.capacity());
            }
        }

        @Override
        public String toString() {
            return "tcp region " + serial + " " + descriptor;
        }
    }
}
