package io.rdmacomm.rdma;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.rdmacomm.api.Access;
import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.MemoryRegion;
import io.rdmacomm.api.RegionDescriptor;
import io.rdmacomm.api.RemoteAccessException;
import io.rdmacomm.api.support.AbstractCommunicator;
import io.rdmacomm.rdma.spi.Completion;
import io.rdmacomm.rdma.spi.LocalRegion;
import io.rdmacomm.rdma.spi.RdmaChannel;
import io.rdmacomm.rdma.spi.RemoteRegion;
import io.rdmacomm.testkit.TransportUnderTest;
import java.io.IOException;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.EnumSet;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A client that bypasses its engine's checks and drives its provider channel directly (issue 12: "rdma:// remote
 * memory is protected only by the client's own check"), against a server whose regions lie inside one larger
 * buffer of canary bytes: forged and stale keys, writes outside a region, into a read-only region and 1 MiB past
 * one, gets past the end, of a write-only region and 1 MiB past one. Not one byte of the buffer outside what the
 * peer may write changes, the client learns no byte it may not read, and the server keeps serving a well-behaved
 * client. Run by the UCX providers on shared memory and {@code UCX_TLS=tcp} with a one-line subclass.
 */
public abstract class HostilePeerContractTest {
    private static final int MIB = 1024 * 1024;
    private static final int REGION = 16 * 1024;
    /** Where the regions lie in the server's buffer: canaries for 1 MiB and more on both sides. */
    private static final int RW_AT = MIB;
    private static final int RO_AT = MIB + 64 * 1024;
    private static final int WO_AT = MIB + 128 * 1024;
    private static final long WAIT_SECONDS = 20;

    private final TransportUnderTest transport;
    private final Deque<AutoCloseable> resources = new ArrayDeque<>();
    private final ExecutorService pool = Executors.newCachedThreadPool();
    private ByteBuffer memory;
    private byte[] original;
    private Communicator server;

    protected HostilePeerContractTest(TransportUnderTest transport) {
        this.transport = transport;
    }

    @BeforeEach
    void serve() throws IOException {
        transport.skipReason().ifPresent(r -> Assumptions.abort(transport + " cannot be tested here: " + r));
        memory = ByteBuffer.allocateDirect(3 * MIB);
        original = new byte[memory.capacity()];
        new Random(12).nextBytes(original);
        memory.put(original).clear();
        server = track(transport.open(transport.serverEndpoint()));
        server.serve();
    }

    @AfterEach
    void closeAll() throws Exception {
        while (!resources.isEmpty()) {
            resources.pop().close();
        }
        pool.shutdownNow();
    }

    private <T extends AutoCloseable> T track(T resource) {
        resources.push(resource);
        return resource;
    }

    /** A client connection and the server's side of it, with three regions of {@link #memory} registered. */
    private record Connected(Communicator client, Communicator accepted, RegionDescriptor rw, RegionDescriptor ro,
            RegionDescriptor wo) {
    }

    private Connected connect() throws Exception {
        Future<Communicator> accepted = pool.submit(server::accept);
        Communicator client = track(transport.open(transport.withOptions(server.endpoint())));
        client.connect();
        Communicator a = track(accepted.get(WAIT_SECONDS, TimeUnit.SECONDS));
        return new Connected(client, a, region(a, RW_AT, Access.readWrite()), region(a, RO_AT,
                EnumSet.of(Access.REMOTE_READ)), region(a, WO_AT, EnumSet.of(Access.REMOTE_WRITE)));
    }

    private RegionDescriptor region(Communicator c, int at, Set<Access> access) throws IOException {
        MemoryRegion r = c.register(memory.duplicate().position(at).limit(at + REGION), access);
        // the descriptor is all a peer gets: the region id and, where the transport checks bounds, a key
        assertEquals(AnnounceMessage.KEY_ID_BYTES, r.descriptor().key().length,
                "the owner handed out a provider key on a transport that does not check remote bounds");
        return r.descriptor();
    }

    /** The provider channel of a connected rdma:// communicator, which a hostile client drives directly. */
    public static RdmaChannel channelOf(Communicator c) throws ReflectiveOperationException {
        Method link = AbstractCommunicator.class.getDeclaredMethod("link");
        link.setAccessible(true);
        Connection connection = (Connection) link.invoke(c);
        Field f = Connection.class.getDeclaredField("state");
        f.setAccessible(true);
        return ((ConnectionState) f.get(connection)).channel();
    }

    private void assertMemoryUntouched(String after) {
        byte[] now = new byte[memory.capacity()];
        memory.duplicate().clear().get(now);
        for (int i = 0; i < now.length; i++) {
            if (now[i] != original[i]) {
                fail(after + ": the server's byte " + i + " changed (regions at " + RW_AT + ", " + RO_AT + ", "
                        + WO_AT + ", " + REGION + " bytes each)");
            }
        }
    }

    /** A completion to wait for. */
    private static final class Outcome extends CompletableFuture<Void> implements Completion {
        @Override
        public void completed() {
            complete(null);
        }

        @Override
        public void failed(IOException cause) {
            completeExceptionally(cause);
        }
    }

    @Test
    @Timeout(120)
    void rawWritesOutsideWhatTheServerRegisteredChangeNothingAndCostTheAttackerItsConnection() throws Exception {
        // the region a stale key names: registered, handed out, deregistered
        Connected stale = connect();
        record Attack(String what, long address, int length) {
        }
        Attack[] attacks = {
            new Attack("across the end of the read-write region", stale.rw().address() + REGION - 8, 64),
            new Attack("before the read-write region", stale.rw().address() - 4096, 64),
            new Attack("into the read-only region", stale.ro().address(), 64),
            new Attack("1 MiB past the read-write region", stale.rw().address() + REGION + MIB, 4096),
        };
        for (Attack attack : attacks) {
            Connected c = connect();
            hostileWrite(c, attack.address(), attack.length(), attack.what());
        }
        MemoryRegion closed = stale.accepted().register(memory.duplicate().position(0).limit(REGION),
                Access.readWrite());
        RegionDescriptor staleKey = closed.descriptor();
        closed.close();
        hostileWrite(stale, staleKey.address(), 64, "into a deregistered region (stale key)");
        assertWellBehavedClientServed();
    }

    /** Writes {@code length} bytes of 0xEE at {@code address} through the raw channel with a forged key. */
    private void hostileWrite(Connected c, long address, int length, String what) throws Exception {
        RdmaChannel ch = channelOf(c.client());
        ByteBuffer src = ByteBuffer.allocateDirect(length);
        while (src.hasRemaining()) {
            src.put((byte) 0xEE);
        }
        LocalRegion srcRegion = ch.register(src, Set.of());
        byte[] forgedKey = {0, 0, 0, 1, (byte) 0xde, (byte) 0xad, (byte) 0xbe, (byte) 0xef};
        RemoteRegion target = ch.unpack(new RegionDescriptor(address, length, Access.readWrite(), forgedKey));
        ch.write(srcRegion, srcRegion.address(), target, address, length, null, new Outcome());
        // the owner's provider refuses the write and fails the attacker's connection: its read ends in an error
        Future<Integer> read = pool.submit(() -> c.accepted().read(ByteBuffer.allocate(1)));
        Throwable t = assertThrows(Exception.class, () -> read.get(WAIT_SECONDS, TimeUnit.SECONDS),
                "the server's side of a connection that wrote " + what).getCause();
        assertInstanceOf(IOException.class, t, what);
        assertMemoryUntouched("a write " + what);
    }

    @Test
    @Timeout(120)
    void rawGetRequestsOutsideWhatTheServerRegisteredAreRefusedAndReadNothing() throws Exception {
        Connected c = connect();
        RdmaChannel ch = channelOf(c.client());
        // one-sided reads with the descriptors the server handed out (or forged keys) are not possible at all
        RemoteRegion forged = ch.unpack(new RegionDescriptor(c.ro().address(), MIB, Access.readWrite(),
                new byte[] {1, 2, 3, 4}));
        ByteBuffer dst = ByteBuffer.allocateDirect(2 * MIB);
        LocalRegion dstRegion = ch.register(dst, EnumSet.of(Access.REMOTE_WRITE));
        Outcome read = new Outcome();
        ch.read(forged, c.ro().address() - 4096, dstRegion, dstRegion.address(), 8192, read);
        Throwable refused = assertThrows(Exception.class, () -> read.get(WAIT_SECONDS, TimeUnit.SECONDS));
        assertInstanceOf(RemoteAccessException.class, refused.getCause());

        // engine requests the client's engine would never send: the server's engine refuses each
        int rw = ByteBuffer.wrap(c.rw().key()).getInt();
        int wo = ByteBuffer.wrap(c.wo().key()).getInt();
        long[][] requests = {
            {rw, REGION - 8, 64},          // past the end
            {rw, REGION + MIB, 4096},      // 1 MiB past
            {rw, Long.MAX_VALUE - 2, 16},  // offset + length overflows
            {wo, 0, 64},                   // a region without REMOTE_READ
            {rw + 1000, 0, 64},            // no such region
        };
        int seq = 1_000_000;
        for (long[] r : requests) {
            GetRequestMessage g = new GetRequestMessage(seq++, (int) r[0], r[1], (int) r[2], dstRegion.address(),
                    dstRegion.descriptor());
            ch.send(g.encode(ByteBuffer.allocate(g.encodedLength())), new Outcome());
        }
        // the server answers in order: once a valid get is answered, so were the hostile ones
        ByteBuffer valid = ByteBuffer.allocate(16);
        c.client().get(c.ro(), 0, valid);
        byte[] expected = new byte[16];
        System.arraycopy(original, RO_AT, expected, 0, 16);
        assertArrayEquals(expected, valid.array(), "a valid get after the refused ones");
        for (int i = 0; i < dst.capacity(); i++) {
            if (dst.get(i) != 0) {
                fail("the server wrote byte " + i + " of the hostile client's destination");
            }
        }
        assertMemoryUntouched("refused gets");
        // the connection stays usable both ways
        c.client().put(ByteBuffer.wrap(new byte[] {7}), c.rw(), 0);
        ByteBuffer back = ByteBuffer.allocate(1);
        c.client().get(c.rw(), 0, back);
        assertEquals(7, back.get(0));
        memory.put(RW_AT, original[RW_AT]);
        assertWellBehavedClientServed();
    }

    /** A new, well-behaved client still gets a put and a get served, exactly inside the region. */
    private void assertWellBehavedClientServed() throws Exception {
        Connected good = connect();
        byte[] patch = new byte[REGION];
        new Random(34).nextBytes(patch);
        good.client().put(ByteBuffer.wrap(patch), good.rw(), 0);
        ByteBuffer back = ByteBuffer.allocate(REGION);
        good.client().get(good.rw(), 0, back);
        assertArrayEquals(patch, back.array(), "a well-behaved client's put and get");
        byte[] region = new byte[REGION];
        memory.get(RW_AT, region);
        assertArrayEquals(patch, region, "the put landed in the region");
        System.arraycopy(patch, 0, original, RW_AT, REGION);
        assertMemoryUntouched("a well-behaved client's put");
        assertTrue(good.accepted().isOpen());
    }
}
