package io.rdmacomm.local;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmacomm.api.Access;
import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.CommunicatorException;
import io.rdmacomm.api.Communicators;
import io.rdmacomm.api.Endpoint;
import io.rdmacomm.api.HandshakeException;
import io.rdmacomm.api.MemoryRegion;
import java.io.IOException;
import java.net.BindException;
import java.net.ConnectException;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.channels.ByteChannel;
import java.nio.channels.ClosedChannelException;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** What the local transport does beyond the contract kits: its handshake, registry, pipes and limits. */
@Timeout(30)
class LocalCommunicatorTest {
    private static final AtomicInteger NAMES = new AtomicInteger();
    private final Deque<AutoCloseable> open = new ArrayDeque<>();
    private final ExecutorService pool = Executors.newCachedThreadPool();

    @AfterEach
    void closeAll() throws Exception {
        while (!open.isEmpty()) {
            open.pop().close();
        }
        pool.shutdownNow();
        assertTrue(pool.awaitTermination(10, TimeUnit.SECONDS), "a helper thread stayed blocked after close");
    }

    private <T extends AutoCloseable> T track(T c) {
        open.push(c);
        return c;
    }

    private static String name() {
        return "local://unit-" + NAMES.incrementAndGet();
    }

    private Communicator[] pair(String options) throws Exception {
        Communicator server = track(Communicators.serve(name() + options));
        Future<Communicator> accepted = pool.submit(server::accept);
        Communicator client = track(Communicators.connect(server.endpoint().toString()));
        return new Communicator[] {server, client, track(accepted.get(10, TimeUnit.SECONDS))};
    }

    @Test
    void aWrongProtocolVersionIsNamedInTheHandshakeError() {
        ByteBuffer hello = ByteBuffer.allocate(6).putInt(LocalCommunicator.MAGIC).putShort((short) 2).flip();
        HandshakeException e = assertThrows(HandshakeException.class,
                () -> LocalCommunicator.checkHello(hello, "test"));
        assertTrue(e.getMessage().contains("expected protocol version 1, got 2"), e.getMessage());
    }

    @Test
    void aSilentRawPeerIsDroppedAfterTheHandshakeTimeoutAndTheNextPeerIsAccepted() throws Exception {
        Communicator server = track(Communicators.serve(name() + "?handshakeTimeout=200ms"));
        Future<Communicator> accepted = pool.submit(server::accept);
        ByteChannel raw = track(LocalCommunicator.connectRaw(server.endpoint()));
        Future<Integer> rawEnd = pool.submit(() -> raw.read(ByteBuffer.allocate(1)));
        assertEquals(-1, rawEnd.get(10, TimeUnit.SECONDS), "the silent peer is hung up on");
        Communicator client = track(Communicators.connect(server.endpoint().toString()));
        Communicator peer = track(accepted.get(10, TimeUnit.SECONDS));
        client.write(ByteBuffer.wrap(new byte[] {42}));
        ByteBuffer one = ByteBuffer.allocate(1);
        peer.readFully(one);
        assertEquals(42, one.get(0));
    }

    @Test
    void aNameIsServedOnceAndFreedByClose() throws Exception {
        String uri = name();
        Communicator first = Communicators.serve(uri);
        BindException e = assertThrows(BindException.class, () -> Communicators.serve(uri));
        assertTrue(e.getMessage().contains(uri), e.getMessage());
        first.close();
        track(Communicators.serve(uri));
        ConnectException refused = assertThrows(ConnectException.class,
                () -> LocalCommunicator.connectRaw(Endpoint.parse(name())));
        assertTrue(refused.getMessage().contains("nothing serves"), refused.getMessage());
    }

    @Test
    void aFullPipeBlocksTheWriterAndLosesNothing() throws Exception {
        Communicator[] p = pair("?sendBuffer=4k");
        byte[] data = new byte[1 << 20];
        new Random(1).nextBytes(data);
        AtomicReference<Thread> writer = new AtomicReference<>();
        Future<?> write = pool.submit(() -> {
            writer.set(Thread.currentThread());
            p[2].write(ByteBuffer.wrap(data));
            return null;
        });
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (writer.get() == null || writer.get().getState() != Thread.State.WAITING) {
            assertTrue(System.nanoTime() < deadline, "the writer never blocked on the full pipe");
            LockSupport.parkNanos(1_000_000);
        }
        assertTrue(!write.isDone(), "a 1 MiB write cannot complete into a 4k pipe without a reader");
        ByteBuffer got = ByteBuffer.allocate(data.length);
        p[1].readFully(got);
        write.get(10, TimeUnit.SECONDS);
        assertArrayEquals(data, got.array());
    }

    @Test
    void aWriteBlockedLongerThanTheReadTimeoutFails() throws Exception {
        Communicator[] p = pair("?sendBuffer=1k&readTimeout=200ms");
        SocketTimeoutException e = assertThrows(SocketTimeoutException.class,
                () -> p[2].write(ByteBuffer.allocate(10_000)));
        assertTrue(e.getMessage().contains("readTimeout"), e.getMessage());
    }

    @Test
    void writingToAClosedPeerFailsNamingIt() throws Exception {
        Communicator[] p = pair("");
        p[1].close();
        IOException e = assertThrows(IOException.class, () -> p[2].write(ByteBuffer.allocate(10)));
        assertTrue(e.getMessage().contains("closed by the peer"), e.getMessage());
    }

    @Test
    void syncSucceedsWhenThePeerReadEverythingBeforeClosing() throws Exception {
        Communicator[] p = pair("");
        p[2].write(ByteBuffer.wrap(new byte[] {1, 2, 3}));
        p[1].readFully(ByteBuffer.allocate(3));
        p[1].close();
        p[2].sync();
    }

    @Test
    void syncFailsWhenThePeerClosedWithBytesUnread() throws Exception {
        Communicator[] p = pair("");
        p[2].write(ByteBuffer.wrap(new byte[] {1, 2, 3}));
        p[1].close();
        IOException e = assertThrows(IOException.class, p[2]::sync);
        assertTrue(e.getMessage().contains("before it read everything"), e.getMessage());
    }

    @Test
    void registrationIsLimitedByMaxRegisteredAndFreedByDeregistration() throws Exception {
        Communicator[] p = pair("?maxRegistered=64k");
        MemoryRegion a = p[2].register(ByteBuffer.allocateDirect(48 * 1024), Access.readWrite());
        CommunicatorException e = assertThrows(CommunicatorException.class,
                () -> p[2].register(ByteBuffer.allocateDirect(32 * 1024), Access.readWrite()));
        assertTrue(e.getMessage().contains("maxRegistered=64k"), e.getMessage());
        a.close();
        track(p[2].register(ByteBuffer.allocateDirect(32 * 1024), Access.readWrite()));
    }

    @Test
    void remoteMemoryOfAClosedPeerIsGoneAndClosingDeregisters() throws Exception {
        Communicator[] p = pair("");
        MemoryRegion region = p[2].register(ByteBuffer.allocateDirect(1024), Access.readWrite());
        p[1].put(ByteBuffer.allocate(8), region.descriptor(), 0);
        p[2].close();
        IOException e = assertThrows(IOException.class,
                () -> p[1].put(ByteBuffer.allocate(8), region.descriptor(), 0));
        assertTrue(e.getMessage().contains("closed the connection"), e.getMessage());
        Communicator[] q = pair("");
        MemoryRegion other = q[2].register(ByteBuffer.allocateDirect(1024), Access.readWrite());
        q[2].close();
        assertThrows(IOException.class, () -> q[1].get(other.descriptor(), 0, ByteBuffer.allocate(8)));
        assertThrows(ClosedChannelException.class,
                () -> p[2].register(ByteBuffer.allocateDirect(8), Access.readWrite()));
    }
}
