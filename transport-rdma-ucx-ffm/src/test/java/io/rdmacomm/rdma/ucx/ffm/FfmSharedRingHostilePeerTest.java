package io.rdmacomm.rdma.ucx.ffm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.rdmacomm.api.Access;
import io.rdmacomm.api.RegionDescriptor;
import io.rdmacomm.rdma.spi.MappedRing;
import io.rdmacomm.rdma.spi.RegisteredBuffer;
import io.rdmacomm.rdma.spi.RemoteRegion;
import io.rdmacomm.rdma.ucx.UcxTransports;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A peer whose ring descriptor carries an advert that is not its own ring for this connection, against the memory
 * of the channels that map peers' rings ({@link FfmMemory}, one per connection, as FfmChannel uses it): the ring of
 * another connection replayed, a pipe, an unsealed memfd, another user's memfd. Each is refused, the connection's
 * writes fall back to active messages (no mapping), and the connections whose peers advertised their own rings map
 * them and write into them.
 */
@Timeout(30)
class FfmSharedRingHostilePeerTest {
    private static final int LENGTH = 64 * 1024;
    private static final Set<Access> ACCESS = Set.of(Access.REMOTE_WRITE);
    private final Deque<AutoCloseable> resources = new ArrayDeque<>();

    @BeforeEach
    void sharedRingsOffered() {
        assumeTrue(SharedRing.offered(UcxTransports.sharedMemoryAllowed()), "shared rings are off here (UCX_TLS)");
    }

    @AfterEach
    void closeAll() throws Exception {
        while (!resources.isEmpty()) {
            resources.pop().close();
        }
    }

    /** One side of a connection: its channel's memory, released as FfmChannel releases it. */
    private FfmMemory memory() {
        FfmMemory m = new FfmMemory(null, true);
        resources.push(() -> {
            m.releaseRemotes();
            m.releaseRegions();
        });
        return m;
    }

    /** The owner's receive ring, whose descriptor carries its advert. */
    private static RegionDescriptor ring(FfmMemory owner) throws Exception {
        RegisteredBuffer b = owner.allocate(LENGTH, ACCESS);
        assertNotNull(b.control(), "a shared ring (memfd) backs the receive ring");
        return b.region().descriptor();
    }

    private static RegionDescriptor withKey(RegionDescriptor d, byte[] key) {
        return new RegionDescriptor(d.address(), d.length(), d.access(), key);
    }

    private static MappedRing map(FfmMemory writer, RegionDescriptor d, String peer) throws Exception {
        RemoteRegion r = writer.unpack(null, d);
        return writer.map(r, peer);
    }

    private static void writesLand(MappedRing mapped, RegisteredBuffer ownersRing, int at, int value) {
        mapped.ring().putInt(at, value);
        assertEquals(value, ownersRing.buffer().getInt(at), "the writer's store is in the owner's ring");
    }

    @Test
    void anAdvertReplayedFromAnotherConnectionIsRefusedAndTheLegitimateConnectionsKeepTheirRings() throws Exception {
        FfmMemory owner1 = memory();
        FfmMemory writer1 = memory();
        FfmMemory owner2 = memory();
        FfmMemory writer2 = memory();
        RegisteredBuffer ring1 = owner1.allocate(LENGTH, ACCESS);
        RegisteredBuffer ring2 = owner2.allocate(LENGTH, ACCESS);
        RegionDescriptor d1 = ring1.region().descriptor();
        RegionDescriptor d2 = ring2.region().descriptor();

        MappedRing legit1 = map(writer1, d1, "peer of connection 1");
        assertNotNull(legit1, "connection 1's writer maps its peer's ring");
        // connection 2's peer advertises connection 1's ring instead of its own
        assertNull(map(writer2, withKey(d2, d1.key()), "hostile peer of connection 2"),
                "a ring that already has its writer is refused: active messages instead");
        writesLand(legit1, ring1, 0, 0x1111);

        // a third connection whose peer is well-behaved maps its own ring
        FfmMemory writer3 = memory();
        MappedRing legit2 = map(writer3, d2, "peer of connection 3");
        assertNotNull(legit2);
        writesLand(legit2, ring2, 128, 0x2222);
        assertEquals(0x1111, ring1.buffer().getInt(0), "connection 1's ring untouched by the others");
    }

    @Test
    void anAdvertNamingAPipeOrAnUnsealedOrForeignMemfdIsRefused() throws Exception {
        FfmMemory owner = memory();
        FfmMemory writer = memory();
        RegionDescriptor d = ring(owner);
        int pid = (int) ProcessHandle.current().pid();
        Process cat = new ProcessBuilder("cat").start();
        resources.push(() -> cat.destroyForcibly().waitFor());
        assertNull(map(writer, withKey(d, forged(d.key(), cat.pid(), 0)), "peer naming a pipe"));
        try (SharedRingTest.Memfd unsealed = new SharedRingTest.Memfd("rdmacomm-ring", SharedRing.HEADER + LENGTH,
                false)) {
            assertNull(map(writer, withKey(d, forged(d.key(), pid, unsealed.fd)), "peer naming an unsealed memfd"));
        }
        try (SharedRingTest.Memfd foreign = new SharedRingTest.Memfd("rdmacomm-ring", SharedRing.HEADER + LENGTH,
                true)) {
            if (foreign.chown(65_534)) {
                assertNull(map(writer, withKey(d, forged(d.key(), pid, foreign.fd)), "peer naming another uid's"));
            }
        }
        MappedRing legit = map(writer, d, "the peer itself");
        assertNotNull(legit, "the refusals cost the real ring nothing");
    }

    /** {@code advert} with another pid and descriptor (boot id, size and token kept). */
    private static byte[] forged(byte[] advert, long pid, int fd) {
        byte[] a = advert.clone();
        ByteBuffer.wrap(a).putLong(16, pid).putInt(24, fd);
        return a;
    }
}
