package io.rdmacomm.rdma;

import io.rdmacomm.api.Access;
import io.rdmacomm.api.CommunicatorException;
import io.rdmacomm.api.MemoryRegion;
import io.rdmacomm.api.RegionDescriptor;
import io.rdmacomm.api.RemoteAccessException;
import io.rdmacomm.api.Units;
import io.rdmacomm.api.support.Waiter;
import io.rdmacomm.rdma.spi.Completion;
import io.rdmacomm.rdma.spi.LocalRegion;
import io.rdmacomm.rdma.spi.RdmaChannel;
import io.rdmacomm.rdma.spi.RemoteRegion;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One-sided remote memory of a connection: regions this side registered for the peer (announced with ANNOUNCE
 * before their descriptor is handed out, revoked with REVOKE before they are deregistered, each waiting for the
 * peer's ACK) and the peer's announced regions that put and get act on. A descriptor's key is
 * {@code u32 region id ‖ provider key}; put and get check the target's announcement (unknown or forged key,
 * bounds, access) and fail that operation alone.
 *
 * <p>Where the owner's provider withholds one-sided access (its descriptors carry no provider key: UCX on shared
 * memory or tcp, which do not check remote bounds), puts still go through the channel's write, which that provider
 * carries as a message its owner checks and places, and gets are served by the owner's engine: GET_REQ names the
 * region by id, the owner checks bounds and REMOTE_READ against its own registration and writes the bytes into the
 * requester's registered destination with GET_DONE as the write's notification, or answers GET_DONE refusing.
 */
final class PeerMemory {
    private static final Logger LOG = LoggerFactory.getLogger(PeerMemory.class);

    private final ConnectionState state;
    private final String putWhat;
    private final String getWhat;
    private final AtomicInteger nextRegionId = new AtomicInteger(1);
    private final Map<Integer, Region> regions = new ConcurrentHashMap<>();
    private final Map<Integer, PeerRegion> peerRegions = new ConcurrentHashMap<>();
    /** ACKs of ANNOUNCE and REVOKE not collected yet, by {@link #ackKey}. */
    private final Set<Long> acks = ConcurrentHashMap.newKeySet();
    /** Gets served by the owner's engine, waiting for its GET_DONE, by sequence number. */
    private final Map<Integer, PendingGet> pendingGets = new ConcurrentHashMap<>();
    private final AtomicInteger nextGetSeq = new AtomicInteger();
    private final AtomicInteger nextPutSeq = new AtomicInteger();

    PeerMemory(ConnectionState state) {
        this.state = state;
        this.putWhat = state.readTimeoutWhat("put");
        this.getWhat = state.readTimeoutWhat("get");
    }

    // ---- this side's regions -----------------------------------------------------------------------------------

    MemoryRegion register(ByteBuffer buffer, Set<Access> access) throws IOException {
        if (!buffer.isDirect()) {
            throw new IllegalArgumentException("only direct buffers can be registered, got a heap buffer");
        }
        if (access.isEmpty()) {
            throw new IllegalArgumentException("empty access set: give REMOTE_READ, REMOTE_WRITE or both");
        }
        if (buffer.isReadOnly() && access.contains(Access.REMOTE_WRITE)) {
            throw new IllegalArgumentException("a read-only buffer cannot be registered for REMOTE_WRITE");
        }
        state.checkUsable();
        ByteBuffer view = buffer.slice();
        if (!state.budget.tryReserve(view.capacity())) {
            throw new CommunicatorException("registering " + view.capacity() + " bytes on " + state.endpoint
                    + " would exceed maxRegistered " + Units.formatSize(state.budget.limit()) + " ("
                    + state.budget.used() + " bytes registered)");
        }
        LocalRegion lr;
        try {
            lr = state.channel().register(view, access);
        } catch (IOException | RuntimeException e) {
            state.budget.release(view.capacity());
            throw e;
        }
        int id = nextRegionId.getAndIncrement();
        RegionDescriptor pd = lr.descriptor();
        byte[] pk = pd.key();
        byte[] key = ByteBuffer.allocate(AnnounceMessage.KEY_ID_BYTES + pk.length).putInt(id).put(pk).array();
        Region r = new Region(id, view, lr, new RegionDescriptor(pd.address(), pd.length(), access, key));
        regions.put(id, r);
        AnnounceMessage announce = new AnnounceMessage(id, r.descriptor);
        try {
            state.send(announce.encode(ByteBuffer.allocate(announce.encodedLength())));
            awaitAck(AnnounceMessage.TYPE, id, "registration");
        } catch (IOException | RuntimeException e) {
            r.close();
            throw e;
        }
        return r;
    }

    private static long ackKey(byte type, int id) {
        return ((long) type << 32) | (id & 0xffffffffL);
    }

    private void awaitAck(byte type, int id, String what) throws IOException {
        long key = ackKey(type, id);
        state.waiter.await(() -> acks.contains(key) || state.failure() != null,
                Waiter.deadlineAfter(state.handshakeTimeoutNanos),
                "waiting for " + state.peerName() + " to acknowledge a " + what + " (handshakeTimeout)");
        if (!acks.remove(key)) {
            throw new CommunicatorException(what + " of a region on " + state.endpoint + " failed: "
                    + state.failure().getMessage(), state.failure());
        }
    }

    /** A region of this side, registered for the peer. */
    private final class Region implements MemoryRegion {
        private final int id;
        private final ByteBuffer buffer;
        private final LocalRegion local;
        private final RegionDescriptor descriptor;
        private boolean released;

        Region(int id, ByteBuffer buffer, LocalRegion local, RegionDescriptor descriptor) {
            this.id = id;
            this.buffer = buffer;
            this.local = local;
            this.descriptor = descriptor;
        }

        @Override
        public ByteBuffer buffer() {
            return buffer.duplicate().clear();
        }

        @Override
        public RegionDescriptor descriptor() {
            return descriptor;
        }

        @Override
        public void close() {
            if (!markReleased()) {
                return;
            }
            if (state.isEstablished() && !state.isClosed() && state.failure() == null) {
                // the peer must stop using the key before the memory stops being registered
                try {
                    state.send(RevokeMessage.encode(ByteBuffer.allocate(RevokeMessage.LENGTH), id));
                    awaitAck(RevokeMessage.TYPE, id, "deregistration");
                } catch (IOException e) {
                    LOG.warn("{}: deregistering region {} without the acknowledgement of {}: {}", state.endpoint,
                            descriptor, state.peerName(), e.getMessage());
                }
            }
            deregister();
        }

        /** Whether this call released the region (it was not released before). */
        private synchronized boolean markReleased() {
            if (released) {
                return false;
            }
            released = true;
            regions.remove(id);
            return true;
        }

        private void deregister() {
            local.close();
            state.budget.release(buffer.capacity());
        }
    }

    // ---- the peer's regions ------------------------------------------------------------------------------------

    void put(ByteBuffer src, RegionDescriptor remote, long offset) throws IOException {
        oneSided(remote, offset, src, Access.REMOTE_WRITE);
    }

    void get(RegionDescriptor remote, long offset, ByteBuffer dst) throws IOException {
        oneSided(remote, offset, dst, Access.REMOTE_READ);
    }

    private void oneSided(RegionDescriptor remote, long offset, ByteBuffer local, Access needed)
            throws IOException {
        state.checkUsable();
        PeerRegion pr = resolve(remote);
        int n = local.remaining();
        pr.announced.checkAccess(offset, n, needed);
        synchronized (pr) {
            if (pr.revoked) {
                throw new RemoteAccessException("region " + remote + " of " + state.peerName() + " was deregistered");
            }
            pr.inflight++;
        }
        try {
            if (n > 0) {
                transfer(pr, offset, local, needed);
            }
        } finally {
            boolean ack;
            synchronized (pr) {
                pr.inflight--;
                ack = pr.revoked && pr.inflight == 0;
            }
            if (ack) {
                ackRevoke(pr.id);
            }
        }
    }

    /** Moves {@code local}'s remaining bytes, through a registered bounce buffer unless it is direct and writable. */
    private void transfer(PeerRegion pr, long offset, ByteBuffer local, Access needed) throws IOException {
        int n = local.remaining();
        boolean put = needed == Access.REMOTE_WRITE;
        boolean byOwner = !put && pr.provider.key().length == 0;
        RdmaChannel ch = state.channel();
        RemoteRegion rr = byOwner ? null : pr.unpacked(ch);
        ByteBuffer bounce = null;
        if (!local.isDirect() || local.isReadOnly()) {
            bounce = ByteBuffer.allocateDirect(n);
            if (put) {
                bounce.put(local.duplicate()).flip();
            }
        }
        ByteBuffer target = bounce != null ? bounce : local;
        RegistrationCache.Entry e = state.cache().acquire(target);
        // the cache registers for REMOTE_WRITE; so must a destination the owner writes into
        LocalRegion temp = e == null ? ch.register(target, byOwner ? Set.of(Access.REMOTE_WRITE) : Set.of()) : null;
        try {
            LocalRegion lr = e != null ? e.region : temp;
            long localAddress = lr.address() + (bounce != null ? 0 : local.position());
            long remoteAddress = pr.announced.address() + offset;
            if (byOwner) {
                getFromOwner(pr, offset, n, lr, localAddress);
            } else {
                oneSidedTransfer(ch, put, pr, rr, lr, localAddress, remoteAddress, n);
            }
        } finally {
            if (e != null) {
                state.cache().release(e);
            }
            if (temp != null) {
                temp.close();
            }
        }
        if (!put && bounce != null) {
            local.duplicate().put(bounce);
        }
        local.position(local.limit());
    }

    /**
     * A put or a one-sided get. A put into a region whose owner withholds one-sided access carries PUT_PLACED and
     * returns once the owner acknowledged it: its provider delivers the notification only after it checked and
     * placed the bytes, whereas the write's own completion says only that the message left.
     */
    private void oneSidedTransfer(RdmaChannel ch, boolean put, PeerRegion pr, RemoteRegion rr, LocalRegion lr,
            long localAddress, long remoteAddress, int n) throws IOException {
        OpCompletion done = new OpCompletion(state);
        long placed = -1;
        if (put) {
            ByteBuffer note = null;
            if (pr.provider.key().length == 0) {
                int seq = nextPutSeq.incrementAndGet();
                placed = ackKey(PutPlacedMessage.TYPE, seq);
                note = PutPlacedMessage.encode(ByteBuffer.allocate(PutPlacedMessage.LENGTH), seq);
            }
            ch.write(lr, localAddress, rr, remoteAddress, n, note, done);
        } else {
            ch.read(rr, remoteAddress, lr, localAddress, n, done);
        }
        state.awaitOrFail(done.finishedOrFailed, put ? putWhat : getWhat);
        done.check((put ? "put into " : "get from ") + pr.announced + " of " + state.peerName());
        if (placed >= 0) {
            long key = placed;
            state.awaitOrFail(() -> acks.contains(key) || state.failure() != null, putWhat);
            if (!acks.remove(key)) {
                throw new CommunicatorException("put into " + pr.announced + " of " + state.peerName() + " failed: "
                        + state.failure().getMessage(), state.failure());
            }
        }
    }

    /** Asks the region's owner for the bytes (GET_REQ) and waits for its GET_DONE. */
    private void getFromOwner(PeerRegion pr, long offset, int n, LocalRegion lr, long localAddress)
            throws IOException {
        int seq = nextGetSeq.incrementAndGet();
        PendingGet pending = new PendingGet();
        pendingGets.put(seq, pending);
        try {
            GetRequestMessage req = new GetRequestMessage(seq, pr.id, offset, n, localAddress, lr.descriptor());
            state.send(req.encode(ByteBuffer.allocate(req.encodedLength())));
            state.awaitOrFail(() -> pending.answered || state.failure() != null, getWhat);
        } finally {
            pendingGets.remove(seq);
        }
        if (!pending.answered) {
            throw new CommunicatorException("get from " + pr.announced + " of " + state.peerName() + " failed: "
                    + state.failure().getMessage(), state.failure());
        }
        if (pending.refusal != null) {
            throw new RemoteAccessException("get of " + n + " bytes at offset " + offset + " of region "
                    + pr.announced + " refused by " + state.peerName() + ": " + pending.refusal);
        }
    }


    private PeerRegion resolve(RegionDescriptor remote) throws RemoteAccessException {
        byte[] key = remote.key();
        PeerRegion pr = key.length >= AnnounceMessage.KEY_ID_BYTES
                ? peerRegions.get(ByteBuffer.wrap(key).getInt()) : null;
        if (pr == null || !pr.announced.equals(remote)) {
            throw new RemoteAccessException("unknown remote key for region " + remote + ": " + state.peerName()
                    + " has registered no such region on this connection");
        }
        return pr;
    }

    private void ackRevoke(int id) {
        state.send(AckMessage.encode(ByteBuffer.allocate(AckMessage.LENGTH), RevokeMessage.TYPE, id));
    }

    /** A get the owner serves: its GET_DONE, once it arrived. */
    private static final class PendingGet {
        volatile String refusal;
        volatile boolean answered;
    }

    /** A region the peer registered for this side. */
    private static final class PeerRegion {
        final int id;
        final RegionDescriptor announced;
        final RegionDescriptor provider;
        RemoteRegion unpacked;
        int inflight;
        boolean revoked;

        PeerRegion(int id, RegionDescriptor announced) {
            this.id = id;
            this.announced = announced;
            byte[] k = announced.key();
            this.provider = new RegionDescriptor(announced.address(), announced.length(), announced.access(),
                    Arrays.copyOfRange(k, AnnounceMessage.KEY_ID_BYTES, k.length));
        }

        synchronized RemoteRegion unpacked(RdmaChannel ch) throws IOException {
            if (unpacked == null) {
                unpacked = ch.unpack(provider);
            }
            return unpacked;
        }

        synchronized void release() {
            if (unpacked != null) {
                unpacked.close();
                unpacked = null;
            }
        }
    }

    // ---- events ------------------------------------------------------------------------------------------------

    void onAnnounce(AnnounceMessage a) {
        peerRegions.put(a.regionId(), new PeerRegion(a.regionId(), a.region()));
        state.send(AckMessage.encode(ByteBuffer.allocate(AckMessage.LENGTH), AnnounceMessage.TYPE, a.regionId()));
    }

    /** The peer deregisters a region: acknowledged at once, or by the last operation on it still in flight. */
    void onRevoke(int id) {
        PeerRegion pr = peerRegions.remove(id);
        boolean ack = true;
        if (pr != null) {
            synchronized (pr) {
                pr.revoked = true;
                ack = pr.inflight == 0;
            }
            pr.release();
        }
        if (ack) {
            ackRevoke(id);
        }
    }

    /**
     * The peer asks for bytes of one of this side's regions (GET_REQ). This side checks what the peer's engine
     * checked already (an honest peer never sends a request out of bounds), since a peer may bypass its engine:
     * a refusal names region, offset, length and reason to the peer and is logged here; nothing is read. The
     * connection stays up: nothing was touched, and a peer that wants to keep probing can reconnect anyway.
     */
    void onGetRequest(GetRequestMessage g) {
        Region r = regions.get(g.regionId());
        String refusal = null;
        if (r == null) {
            refusal = "no region " + g.regionId() + " is registered for this connection (never, or deregistered)";
        } else if (!r.descriptor.access().contains(Access.REMOTE_READ)) {
            refusal = "region " + g.regionId() + " is not registered for REMOTE_READ (" + r.descriptor.access() + ")";
        } else if (g.offset() > r.descriptor.length() || g.length() > r.descriptor.length() - g.offset()) {
            refusal = g.length() + " bytes at offset " + g.offset() + " lie outside region " + g.regionId() + " ("
                    + r.descriptor.length() + " bytes)";
        }
        if (refusal != null) {
            if (r == null) {
                LOG.debug("{}: refused a get from {}: {}", state.endpoint, state.peerName(), refusal);
            } else {
                LOG.warn("{}: refused a get from {} that its engine would not have sent: {}", state.endpoint,
                        state.peerName(), refusal);
            }
            state.send(GetDoneMessage.encodeRefused(g.seq(), refusal));
            return;
        }
        RdmaChannel ch = state.channel();
        RemoteRegion dst;
        try {
            dst = ch.unpack(g.registration());
        } catch (IOException e) {
            state.send(GetDoneMessage.encodeRefused(g.seq(), "the destination " + g.registration()
                    + " is unusable: " + e.getMessage()));
            return;
        }
        ByteBuffer note = GetDoneMessage.encodeDone(ByteBuffer.allocate(GetDoneMessage.REASON_OFFSET), g.seq());
        ch.write(r.local, r.local.address() + g.offset(), dst, g.destination(), g.length(), note, new Completion() {
            // holds the region (and its buffer) until the provider is done reading it
            private final Region source = r;

            @Override
            public void completed() {
                dst.close();
            }

            @Override
            public void failed(IOException cause) {
                dst.close();
                state.fail(new CommunicatorException("serving a get of region " + source.id + " to "
                        + state.peerName() + " failed: " + cause.getMessage(), cause));
            }
        });
    }

    /** The owner answered a GET_REQ; an answer to nothing pending (the getter gave up) is dropped. */
    void onGetDone(GetDoneMessage d) {
        PendingGet p = pendingGets.get(d.seq());
        if (p == null) {
            LOG.debug("{}: GET_DONE {} from {} answers no pending get", state.endpoint, d.seq(), state.peerName());
            return;
        }
        p.refusal = d.refusal();
        p.answered = true;
        state.wake();
    }

    /** The peer acknowledged an ANNOUNCE or a REVOKE of region {@code id}. */
    void onAck(byte acknowledged, int id) {
        acks.add(ackKey(acknowledged, id));
    }

    /** On close: deregisters this side's regions without asking the peer, and drops the peer's. */
    void releaseAll() {
        for (Region r : regions.values()) {
            if (r.markReleased()) {
                r.deregister();
            }
        }
        for (PeerRegion pr : peerRegions.values()) {
            pr.release();
        }
        peerRegions.clear();
    }
}
