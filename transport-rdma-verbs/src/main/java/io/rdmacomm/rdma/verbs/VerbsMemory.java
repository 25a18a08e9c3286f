package io.rdmacomm.rdma.verbs;

import com.ibm.disni.verbs.IbvMr;
import io.rdmacomm.api.Access;
import io.rdmacomm.api.CommunicatorException;
import io.rdmacomm.api.RegionDescriptor;
import io.rdmacomm.api.RegisteredMemory;
import io.rdmacomm.api.RemoteAccessException;
import io.rdmacomm.rdma.spi.LocalRegion;
import io.rdmacomm.rdma.spi.RemoteRegion;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The memory regions of one connection's protection domain, the peer's regions it unpacked (rkey and range,
 * nothing native), and the checks of a one-sided operation against both before it is posted.
 */
final class VerbsMemory {
    private static final Logger LOG = LoggerFactory.getLogger(VerbsMemory.class);
    /**
     * The process's count of memory regions of this provider, the connections' slot memory ({@link VerbsCalls})
     * included: from registration to deregistration.
     */
    static final RegisteredMemory.Counter LIVE = RegisteredMemory.counter("verbs");

    private final Verbs verbs;
    private final String peer;
    // guarded by this
    private final Set<Local> regions = new LinkedHashSet<>();
    private boolean refusing;
    private boolean released;

    VerbsMemory(Verbs verbs, String peer) {
        this.verbs = verbs;
        this.peer = peer;
    }

    LocalRegion register(ByteBuffer buffer, Set<Access> access) throws IOException {
        if (!buffer.isDirect()) {
            throw new IllegalArgumentException("the verbs provider registers direct buffers only, got " + buffer);
        }
        int length = buffer.capacity();
        if (length == 0) {
            throw new IllegalArgumentException("cannot register an empty buffer");
        }
        int flags = IbvMr.IBV_ACCESS_LOCAL_WRITE;
        if (access.contains(Access.REMOTE_WRITE)) {
            flags |= IbvMr.IBV_ACCESS_REMOTE_WRITE;
        }
        if (access.contains(Access.REMOTE_READ)) {
            flags |= IbvMr.IBV_ACCESS_REMOTE_READ;
        }
        synchronized (this) {
            if (refusing) {
                throw new ClosedChannelException();
            }
        }
        // Registration pins pages and can take long for large buffers: not under a lock operations need.
        long address = verbs.address(buffer);
        IbvMr mr = verbs.register(address, length, flags);
        Local region = new Local(this, buffer, mr, address, length, access);
        synchronized (this) {
            if (!refusing) {
                regions.add(region);
                LIVE.registered(length);
                return region;
            }
        }
        deregisterQuietly(verbs, mr, peer);
        throw new ClosedChannelException();
    }

    RemoteRegion unpack(RegionDescriptor descriptor) throws IOException {
        byte[] key = descriptor.key();
        if (key.length != 4) {
            throw new CommunicatorException("descriptor " + descriptor + " carries a " + key.length + "-byte key,"
                    + " a verbs rkey has 4 bytes (was it packed by another provider?)");
        }
        return new Remote(descriptor, ByteBuffer.wrap(key).getInt());
    }

    /**
     * Checks what the local side can check before posting: the HCA would catch a bad remote range too, but as a
     * remote access error that moves the queue pair to the error state and ends the connection.
     *
     * @return the reason the operation is refused, or null
     */
    IOException check(LocalRegion local, long localAddress, RemoteRegion remote, long remoteAddress, int length,
            Access needed) {
        if (!(local instanceof Local l) || l.memory != this) {
            return new CommunicatorException("local region " + local + " was not registered on this verbs"
                    + " connection to " + peer);
        }
        if (!(remote instanceof Remote r)) {
            return new CommunicatorException("remote region " + remote + " was not unpacked by the verbs provider");
        }
        if (length < 0 || localAddress < l.address || localAddress - l.address > l.length - length) {
            return new CommunicatorException(length + " bytes at 0x" + Long.toHexString(localAddress)
                    + " are outside local region " + l.descriptor() + " (connection to " + peer + ")");
        }
        if (l.closed) {
            return new CommunicatorException("local region " + l.descriptor() + " was deregistered");
        }
        try {
            r.descriptor.checkAccess(remoteAddress - r.descriptor.address(), length, needed);
        } catch (RemoteAccessException e) {
            return e;
        }
        return null;
    }

    /** The channel is closing: registrations from now on are refused. */
    synchronized void refuse() {
        refusing = true;
    }

    /** The queue pair is going: deregisters every region; a region closed later is not deregistered twice. */
    void releaseAll() {
        List<Local> all;
        synchronized (this) {
            refusing = true;
            released = true;
            all = new ArrayList<>(regions);
            regions.clear();
        }
        for (Local r : all) {
            deregisterQuietly(verbs, r.mr, peer);
            LIVE.released(r.length);
        }
    }

    private void deregister(Local region) {
        synchronized (this) {
            if (!regions.remove(region) || released) {
                return;
            }
        }
        deregisterQuietly(verbs, region.mr, peer);
        LIVE.released(region.length);
    }

    static void deregisterQuietly(Verbs verbs, IbvMr mr, String peer) {
        try {
            verbs.deregister(mr);
        } catch (IOException | RuntimeException e) {
            LOG.warn("deregistering memory of the connection to {} failed: {}", peer, e.toString());
        }
    }

    /** A memory region of this connection's protection domain. */
    static final class Local implements LocalRegion {
        final VerbsMemory memory;
        final IbvMr mr;
        final long address;
        final long length;
        private final RegionDescriptor descriptor;
        // The registered memory must stay reachable for as long as the adapter may touch it.
        private final ByteBuffer buffer;
        private volatile boolean closed;

        Local(VerbsMemory memory, ByteBuffer buffer, IbvMr mr, long address, long length, Set<Access> access) {
            this.memory = memory;
            this.buffer = buffer;
            this.mr = mr;
            this.address = address;
            this.length = length;
            this.descriptor = new RegionDescriptor(address, length, access,
                    ByteBuffer.allocate(4).putInt(mr.getRkey()).array());
        }

        @Override
        public long address() {
            return address;
        }

        @Override
        public long length() {
            return length;
        }

        @Override
        public RegionDescriptor descriptor() {
            return descriptor;
        }

        @Override
        public void close() {
            if (!closed) {
                closed = true;
                memory.deregister(this);
            }
        }

        @Override
        public String toString() {
            return descriptor.toString();
        }
    }

    /** A peer's region: its address range and rkey, nothing native to release. */
    static final class Remote implements RemoteRegion {
        final RegionDescriptor descriptor;
        final int rkey;

        Remote(RegionDescriptor descriptor, int rkey) {
            this.descriptor = descriptor;
            this.rkey = rkey;
        }

        @Override
        public RegionDescriptor descriptor() {
            return descriptor;
        }

        @Override
        public void close() {
        }

        @Override
        public String toString() {
            return descriptor.toString();
        }
    }
}
