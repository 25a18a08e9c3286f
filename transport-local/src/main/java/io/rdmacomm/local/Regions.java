package io.rdmacomm.local;

import io.rdmacomm.api.Access;
import io.rdmacomm.api.CommunicatorException;
import io.rdmacomm.api.RegionDescriptor;
import io.rdmacomm.api.RegisteredMemory;
import io.rdmacomm.api.RemoteAccessException;
import io.rdmacomm.api.Units;
import java.nio.ByteBuffer;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The memory one end of a local connection has registered for its peer. The descriptor's address is a region
 * number and its key a random token; accesses are checked against the region as registered, never against
 * what a (possibly tampered) descriptor claims.
 */
final class Regions {
    private static final SecureRandom KEYS = new SecureRandom();
    private static final int KEY_BYTES = 16;
    /** The process's count of local:// regions, from registration to close. */
    private static final RegisteredMemory.Counter LIVE = RegisteredMemory.counter("local");

    private final Map<Long, LocalRegion> byId = new ConcurrentHashMap<>();
    private final AtomicLong nextId = new AtomicLong(1);
    private final long maxRegistered;
    private long registeredBytes;
    private boolean closed;

    Regions(long maxRegistered) {
        this.maxRegistered = maxRegistered;
    }

    /** Registers a direct buffer for {@code access} (the communicator checked both). */
    LocalRegion register(ByteBuffer buffer, Set<Access> access, String owner) throws CommunicatorException {
        ByteBuffer view = buffer.slice();
        byte[] key = new byte[KEY_BYTES];
        KEYS.nextBytes(key);
        long id = nextId.getAndIncrement();
        LocalRegion region = new LocalRegion(this, view,
                new RegionDescriptor(id, view.capacity(), access, key));
        synchronized (this) {
            if (closed) {
                throw new IllegalStateException(owner + " is closed");
            }
            if (registeredBytes + view.capacity() > maxRegistered) {
                throw new CommunicatorException("registering " + view.capacity() + " bytes on " + owner
                        + " would exceed maxRegistered=" + Units.formatSize(maxRegistered) + " ("
                        + registeredBytes + " bytes registered)");
            }
            registeredBytes += view.capacity();
            byId.put(id, region);
        }
        LIVE.registered(view.capacity());
        return region;
    }

    /**
     * The region a peer's access through {@code remote} reaches, after checking key, rights and bounds.
     *
     * @throws RemoteAccessException naming the violation
     */
    LocalRegion resolve(RegionDescriptor remote, long offset, long count, Access needed, String owner)
            throws RemoteAccessException {
        LocalRegion region = byId.get(remote.address());
        if (region == null || !region.keyMatches(remote.key())) {
            throw new RemoteAccessException(needed + " through " + remote + " refused by " + owner
                    + ": unknown or deregistered remote key");
        }
        region.descriptor().checkAccess(offset, count, needed);
        return region;
    }

    void remove(LocalRegion region) {
        synchronized (this) {
            if (byId.remove(region.descriptor().address(), region)) {
                registeredBytes -= region.descriptor().length();
                LIVE.released(region.descriptor().length());
            }
        }
    }

    void closeAll() {
        List<LocalRegion> all;
        synchronized (this) {
            closed = true;
            all = new ArrayList<>(byId.values());
        }
        all.forEach(LocalRegion::close);
    }
}
