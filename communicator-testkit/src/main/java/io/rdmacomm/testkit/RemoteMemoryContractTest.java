package io.rdmacomm.testkit;

import static io.rdmacomm.testkit.Harness.assertBytes;
import static io.rdmacomm.testkit.Harness.await;
import static io.rdmacomm.testkit.Harness.direct;
import static io.rdmacomm.testkit.Harness.random;
import static io.rdmacomm.testkit.Harness.readN;
import static io.rdmacomm.testkit.Harness.writeAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmacomm.api.Access;
import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.MemoryRegion;
import io.rdmacomm.api.RegionDescriptor;
import io.rdmacomm.api.RegisteredMemory;
import io.rdmacomm.api.RemoteAccessException;
import io.rdmacomm.testkit.Harness.Pair;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The one-sided remote-memory contract ({@link Communicator#register}, {@link Communicator#put},
 * {@link Communicator#get}), run against one transport with a one-line subclass, like
 * {@link CommunicatorContractTest}. The accepted side is the target that registers memory and sends its
 * descriptor over the stream; the client is the initiator.
 */
public abstract class RemoteMemoryContractTest {
    private static final int REGION = 64 * 1024;
    private static final Duration THREAD_DEADLINE = Duration.ofSeconds(5);

    private final TransportUnderTest transport;
    private Harness h;

    protected RemoteMemoryContractTest(TransportUnderTest transport) {
        this.transport = Objects.requireNonNull(transport, "transport");
    }

    @BeforeEach
    void openHarness() {
        h = new Harness(transport);
        h.assumeAvailable();
    }

    @AfterEach
    void closeEverythingAndCheckThreads() throws Exception {
        h.close();
        Harness.assertNoThreads(transport.threadPrefix(), THREAD_DEADLINE);
    }

    /** Registers {@code content} on the target, sends the descriptor over the stream, returns what the peer got. */
    private static Registered registerAndSend(Pair p, byte[] content, Set<Access> access) throws Exception {
        ByteBuffer memory = direct(content);
        MemoryRegion region = p.accepted().register(memory, access);
        sendDescriptor(p.accepted(), region.descriptor());
        RegionDescriptor received = receiveDescriptor(p.client());
        assertEquals(region.descriptor(), received, "descriptor after its trip over the stream");
        return new Registered(memory, region, received);
    }

    private record Registered(ByteBuffer memory, MemoryRegion region, RegionDescriptor remote) {
        byte[] snapshot() {
            byte[] b = new byte[memory.capacity()];
            memory.duplicate().clear().get(b);
            return b;
        }
    }

    private static void sendDescriptor(Communicator c, RegionDescriptor d) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(4 + d.encodedLength());
        b.putInt(d.encodedLength());
        d.writeTo(b);
        c.write(b.flip());
        c.sync();
    }

    private static RegionDescriptor receiveDescriptor(Communicator c) throws IOException {
        ByteBuffer len = ByteBuffer.allocate(4);
        c.readFully(len);
        ByteBuffer body = ByteBuffer.allocate(len.flip().getInt());
        c.readFully(body);
        return RegionDescriptor.readFrom(body.flip());
    }

    /** The stream still works both ways and a valid put and get on {@code r} still succeed. */
    private static void assertUsable(Pair p, Registered r) throws Exception {
        Harness.assertUsable(p);
        byte[] probe = random(99, 16);
        p.client().put(ByteBuffer.wrap(probe), r.remote(), 0);
        ByteBuffer back = ByteBuffer.allocate(16);
        p.client().get(r.remote(), 0, back);
        assertBytes(probe, back.array(), "valid put then get after a refused operation");
    }

    @Test
    @Timeout(30)
    void descriptorSentOverTheStreamLetsThePeerPutAndGet() throws Exception {
        Pair p = h.pair();
        byte[] content = random(1, REGION);
        Registered r = registerAndSend(p, content, Access.readWrite());
        assertEquals(REGION, r.remote().length());
        ByteBuffer got = ByteBuffer.allocate(4096);
        p.client().get(r.remote(), 1000, got);
        assertBytes(Arrays.copyOfRange(content, 1000, 5096), got.array(), "get at offset 1000");

        byte[] patch = random(2, 3000);
        ByteBuffer src = ByteBuffer.wrap(patch);
        p.client().put(src, r.remote(), 500);
        ByteBuffer back = ByteBuffer.allocateDirect(3000);
        p.client().get(r.remote(), 500, back);
        byte[] backBytes = new byte[3000];
        back.flip().get(backBytes);
        assertBytes(patch, backBytes, "get after put");
        Harness.exchange(p.client(), p.accepted(), 3);
        System.arraycopy(patch, 0, content, 500, patch.length);
        assertBytes(content, r.snapshot(), "target memory after put");
    }

    @Test
    @Timeout(30)
    void putIsVisibleInTargetMemoryWithoutTheTargetReading() throws Exception {
        Pair p = h.pair();
        CountDownLatch putDone = new CountDownLatch(1);
        CountDownLatch registered = new CountDownLatch(1);
        byte[] data = random(4, REGION);
        Future<byte[]> target = h.async(() -> {
            ByteBuffer memory = ByteBuffer.allocateDirect(REGION);
            MemoryRegion region = p.accepted().register(memory, EnumSet.of(Access.REMOTE_WRITE));
            sendDescriptor(p.accepted(), region.descriptor());
            registered.countDown();
            // The target's application thread only waits: it never reads, yet the bytes must land.
            assertTrue(putDone.await(20, TimeUnit.SECONDS), "initiator never finished its put");
            byte[] seen = new byte[REGION];
            memory.duplicate().clear().get(seen);
            return seen;
        });
        RegionDescriptor remote = receiveDescriptor(p.client());
        assertTrue(registered.await(10, TimeUnit.SECONDS));
        p.client().put(ByteBuffer.wrap(data), remote, 0);
        putDone.countDown();
        assertBytes(data, await(target), "target memory after put");
    }

    @Test
    @Timeout(30)
    void getReturnsTheTargetsCurrentBytes() throws Exception {
        Pair p = h.pair();
        Registered r = registerAndSend(p, new byte[REGION], EnumSet.of(Access.REMOTE_READ));
        byte[] later = random(5, 5000);
        r.memory().duplicate().position(7000).put(later);
        // Tell the initiator over the stream that the target has written its memory.
        Harness.exchange(p.accepted(), p.client(), 6);
        ByteBuffer dst = ByteBuffer.allocate(5000);
        p.client().get(r.remote(), 7000, dst);
        assertEquals(0, dst.remaining(), "get fills dst");
        assertBytes(later, dst.array(), "get of bytes the target wrote after registering");
    }

    @Test
    @Timeout(30)
    void outOfBoundsAccessIsRefusedAndTheConnectionStaysUsable() throws Exception {
        Pair p = h.pair();
        Registered r = registerAndSend(p, random(7, REGION), Access.readWrite());
        byte[] before = r.snapshot();
        assertThrows(RemoteAccessException.class,
                () -> p.client().put(ByteBuffer.allocate(20), r.remote(), REGION - 10), "put across the end");
        assertThrows(RemoteAccessException.class,
                () -> p.client().put(ByteBuffer.allocate(1), r.remote(), REGION), "put just past the end");
        assertThrows(RemoteAccessException.class,
                () -> p.client().get(r.remote(), REGION + 1, ByteBuffer.allocate(1)), "get past the end");
        assertThrows(RemoteAccessException.class,
                () -> p.client().get(r.remote(), -1, ByteBuffer.allocate(4)), "get at a negative offset");
        RegionDescriptor inflated = new RegionDescriptor(r.remote().address(), 2L * REGION, r.remote().access(),
                r.remote().key());
        assertThrows(RemoteAccessException.class,
                () -> p.client().put(ByteBuffer.allocate(100), inflated, REGION + 8),
                "put through a descriptor whose length was tampered with");
        assertBytes(before, r.snapshot(), "target memory after refused accesses");
        assertUsable(p, r);
    }

    @Test
    @Timeout(30)
    void wrongRemoteKeyIsRefusedAndTheConnectionStaysUsable() throws Exception {
        Pair p = h.pair();
        Registered r = registerAndSend(p, random(8, REGION), Access.readWrite());
        byte[] before = r.snapshot();
        byte[] key = r.remote().key();
        byte[] wrong = key.length == 0 ? new byte[] {1} : key.clone();
        wrong[wrong.length - 1] ^= 0x5a;
        RegionDescriptor tampered = new RegionDescriptor(r.remote().address(), r.remote().length(),
                r.remote().access(), wrong);
        assertThrows(RemoteAccessException.class, () -> p.client().put(ByteBuffer.allocate(8), tampered, 0));
        assertThrows(RemoteAccessException.class, () -> p.client().get(tampered, 0, ByteBuffer.allocate(8)));
        assertBytes(before, r.snapshot(), "target memory after refused accesses");
        assertUsable(p, r);
    }

    @Test
    @Timeout(30)
    void missingAccessRightIsRefusedAndTheConnectionStaysUsable() throws Exception {
        Pair p = h.pair();
        byte[] content = random(9, REGION);
        Registered readOnly = registerAndSend(p, content, EnumSet.of(Access.REMOTE_READ));
        assertThrows(RemoteAccessException.class,
                () -> p.client().put(ByteBuffer.allocate(8), readOnly.remote(), 0), "put into a read-only region");
        RegionDescriptor claimsWrite = new RegionDescriptor(readOnly.remote().address(), readOnly.remote().length(),
                Access.readWrite(), readOnly.remote().key());
        assertThrows(RemoteAccessException.class, () -> p.client().put(ByteBuffer.allocate(8), claimsWrite, 0),
                "put through a descriptor that claims a right the target never granted");
        assertBytes(content, readOnly.snapshot(), "read-only memory after refused puts");
        ByteBuffer got = ByteBuffer.allocate(64);
        p.client().get(readOnly.remote(), 0, got);
        assertBytes(Arrays.copyOf(content, 64), got.array(), "get from a read-only region");

        Registered writeOnly = registerAndSend(p, new byte[REGION], EnumSet.of(Access.REMOTE_WRITE));
        assertThrows(RemoteAccessException.class,
                () -> p.client().get(writeOnly.remote(), 0, ByteBuffer.allocate(8)), "get from a write-only region");
        Harness.assertUsable(p);
        byte[] probe = random(10, 32);
        p.client().put(ByteBuffer.wrap(probe), writeOnly.remote(), 0);
        Harness.exchange(p.client(), p.accepted(), 11);
        assertBytes(probe, Arrays.copyOf(writeOnly.snapshot(), 32), "valid put after refused get");
    }

    @Test
    @Timeout(30)
    void deregisteredRegionIsRefusedAndTheConnectionStaysUsable() throws Exception {
        Pair p = h.pair();
        Registered gone = registerAndSend(p, random(12, REGION), Access.readWrite());
        Registered kept = registerAndSend(p, random(13, REGION), Access.readWrite());
        byte[] before = gone.snapshot();
        gone.region().close();
        gone.region().close();
        // Order the deregistration before the initiator's accesses through the stream.
        Harness.exchange(p.accepted(), p.client(), 14);
        assertThrows(RemoteAccessException.class, () -> p.client().put(ByteBuffer.allocate(8), gone.remote(), 0));
        assertThrows(RemoteAccessException.class, () -> p.client().get(gone.remote(), 0, ByteBuffer.allocate(8)));
        assertBytes(before, gone.snapshot(), "deregistered memory after refused accesses");
        assertUsable(p, kept);
    }

    @Test
    @Timeout(30)
    void largePutAndGetAreVerified() throws Exception {
        Pair p = h.pair();
        int size = 8 << 20;
        Registered r = registerAndSend(p, new byte[size], Access.readWrite());
        byte[] data = random(15, size);
        p.client().put(direct(data), r.remote(), 0);
        Harness.exchange(p.client(), p.accepted(), 16);
        assertBytes(data, r.snapshot(), "target memory after an 8 MiB put");

        byte[] second = random(17, size);
        r.memory().duplicate().clear().put(second);
        Harness.exchange(p.accepted(), p.client(), 18);
        ByteBuffer dst = ByteBuffer.allocateDirect(size);
        p.client().get(r.remote(), 0, dst);
        byte[] got = new byte[size];
        dst.flip().get(got);
        assertBytes(second, got, "8 MiB get");
    }

    @Test
    @Timeout(30)
    void registerRejectsHeapBuffersAndEmptyRights() throws Exception {
        Pair p = h.pair();
        assertThrows(IllegalArgumentException.class,
                () -> p.accepted().register(ByteBuffer.allocate(1024), Access.readWrite()), "heap buffer");
        assertThrows(IllegalArgumentException.class,
                () -> p.accepted().register(ByteBuffer.allocateDirect(1024), EnumSet.noneOf(Access.class)),
                "empty access set");
        assertThrows(IllegalArgumentException.class,
                () -> p.accepted().register(ByteBuffer.allocateDirect(1024).asReadOnlyBuffer(),
                        EnumSet.of(Access.REMOTE_WRITE)), "read-only buffer with REMOTE_WRITE");
        Harness.assertUsable(p);
    }

    @Test
    @Timeout(30)
    void bothSidesCanTargetEachOther() throws Exception {
        Pair p = h.pair();
        ByteBuffer clientMemory = ByteBuffer.allocateDirect(REGION);
        MemoryRegion clientRegion = p.client().register(clientMemory, Access.readWrite());
        sendDescriptor(p.client(), clientRegion.descriptor());
        RegionDescriptor atClient = receiveDescriptor(p.accepted());
        byte[] data = random(19, 1000);
        p.accepted().put(ByteBuffer.wrap(data), atClient, 10);
        byte[] seen = new byte[1000];
        clientMemory.duplicate().position(10).get(seen);
        assertBytes(data, seen, "client memory after the server's put");
        byte[] viaView = new byte[1000];
        clientRegion.buffer().position(10).get(viaView);
        assertBytes(data, viaView, "region.buffer() is a view of the registered memory");
        writeAll(p.accepted(), data, data.length);
        assertBytes(data, readN(p.client(), data.length), "stream after the reverse put");
    }

    /**
     * The process's {@link RegisteredMemory} count follows the transport's registrations: one more region of the
     * registered length while it lives, gone on its close, and a region left registered is released with its
     * connection (what a server needs when a peer dies mid-exchange).
     */
    @Test
    @Timeout(30)
    void registeredMemoryIsCountedUntilReleasedOrTheConnectionCloses() throws Exception {
        RegisteredMemory.Usage beforeConnecting = RegisteredMemory.total();
        Pair p = h.pair();
        RegisteredMemory.Usage connected = RegisteredMemory.total();
        MemoryRegion closed = p.accepted().register(ByteBuffer.allocateDirect(REGION), Access.readWrite());
        assertEquals(new RegisteredMemory.Usage(connected.regions() + 1, connected.bytes() + REGION),
                RegisteredMemory.total(), "after registering " + REGION + " bytes");
        MemoryRegion leftOpen = p.accepted().register(ByteBuffer.allocateDirect(3 * REGION), Access.readWrite());
        assertEquals(new RegisteredMemory.Usage(connected.regions() + 2, connected.bytes() + 4 * REGION),
                RegisteredMemory.total(), "after registering " + 3 * REGION + " bytes more");
        closed.close();
        closed.close();
        assertEquals(new RegisteredMemory.Usage(connected.regions() + 1, connected.bytes() + 3 * REGION),
                RegisteredMemory.total(), "after closing the first region (twice)");
        Harness.assertUsable(p);
        p.accepted().close();
        p.client().close();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!RegisteredMemory.total().equals(beforeConnecting) && System.nanoTime() < deadline) {
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5)); // polling for the release after close
        }
        assertEquals(beforeConnecting, RegisteredMemory.total(), "after closing both ends, with region "
                + leftOpen.descriptor().length() + " bytes never closed by the application");
    }
}
