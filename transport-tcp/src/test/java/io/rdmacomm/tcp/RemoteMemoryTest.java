package io.rdmacomm.tcp;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmacomm.api.Access;
import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.CommunicatorException;
import io.rdmacomm.api.Communicators;
import io.rdmacomm.api.MemoryRegion;
import io.rdmacomm.api.RegionDescriptor;
import io.rdmacomm.api.RemoteAccessException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.AsynchronousCloseException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The TCP emulation of remote memory: the lazy progress thread, the stream hand-over, limits. */
class RemoteMemoryTest {
    private final ExecutorService helper = Executors.newCachedThreadPool();
    private final List<AutoCloseable> open = new ArrayList<>();

    @AfterEach
    void closeAll() throws Exception {
        for (int i = open.size() - 1; i >= 0; i--) {
            open.get(i).close();
        }
        helper.shutdownNow();
        assertTrue(helper.awaitTermination(10, TimeUnit.SECONDS));
    }

    /** [server, client, accepted]; the client gets {@code clientOptions}, the accepted side {@code serverOptions}. */
    private Communicator[] pair(String serverOptions, String clientOptions) throws Exception {
        Communicator server = Communicators.serve("tcp://127.0.0.1:0" + serverOptions);
        open.add(server);
        Future<Communicator> accepted = helper.submit(server::accept);
        Communicator client = Communicators.connect("tcp://127.0.0.1:" + server.endpoint().port() + clientOptions);
        open.add(client);
        Communicator peer = accepted.get(10, TimeUnit.SECONDS);
        open.add(peer);
        return new Communicator[] {server, client, peer};
    }

    private static byte[] random(long seed, int n) {
        byte[] b = new byte[n];
        new Random(seed).nextBytes(b);
        return b;
    }

    @Test
    @Timeout(30)
    void theProgressThreadStartsOnFirstUseAndStreamBytesSurviveTheHandOver() throws Exception {
        Communicator[] p = pair("", "");
        p[1].write(ByteBuffer.wrap(random(1, 100_000)));
        p[1].sync();
        ByteBuffer head = ByteBuffer.allocate(10);
        p[2].readFully(head);
        assertEquals(0, TimeoutAndCloseTest.threads("rdmacomm-tcp-progress"), "no progress thread before first use");

        MemoryRegion region = p[2].register(ByteBuffer.allocateDirect(1024), Access.readWrite());
        assertEquals(1, TimeoutAndCloseTest.threads("rdmacomm-tcp-progress"));
        ByteBuffer rest = ByteBuffer.allocate(100_000 - 10);
        p[2].readFully(rest);
        byte[] all = new byte[100_000];
        System.arraycopy(head.array(), 0, all, 0, 10);
        System.arraycopy(rest.array(), 0, all, 10, rest.capacity());
        assertArrayEquals(random(1, 100_000), all, "stream bytes read before and after the hand-over");

        p[1].put(ByteBuffer.wrap(new byte[] {9, 8, 7}), region.descriptor(), 5);
        assertEquals(9, region.buffer().get(5));
        assertEquals(7, region.buffer().get(7));
    }

    @Test
    @Timeout(30)
    void aPutCompletesWhileTheInitiatorsOwnReaderIsBlockedOnTheSocket() throws Exception {
        Communicator[] p = pair("", "");
        MemoryRegion region = p[2].register(ByteBuffer.allocateDirect(64), Access.readWrite());
        Future<byte[]> blockedRead = helper.submit(() -> {
            ByteBuffer b = ByteBuffer.allocate(4);
            p[1].readFully(b);
            return b.array();
        });
        awaitReading(blockedRead);
        p[1].put(ByteBuffer.wrap(new byte[] {1, 2, 3, 4}), region.descriptor(), 0);
        ByteBuffer got = ByteBuffer.allocate(4);
        p[1].get(region.descriptor(), 0, got);
        assertArrayEquals(new byte[] {1, 2, 3, 4}, got.array());
        p[2].write(ByteBuffer.wrap(new byte[] {5, 6, 7, 8}));
        p[2].sync();
        assertArrayEquals(new byte[] {5, 6, 7, 8}, blockedRead.get(10, TimeUnit.SECONDS),
                "the reader that was blocked on the socket gets the stream through the hand-over");
    }

    private static void awaitReading(Future<?> task) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (System.nanoTime() < deadline && !task.isDone()) {
            for (StackTraceElement[] stack : Thread.getAllStackTraces().values()) {
                for (StackTraceElement f : stack) {
                    if (f.getClassName().equals(SocketIo.class.getName())
                            && f.getMethodName().equals("readSome")) {
                        return;
                    }
                }
            }
            Thread.onSpinWait();
        }
        throw new AssertionError("the reader never blocked on the socket");
    }

    @Test
    @Timeout(60)
    void aReaderThatFallsBehindStallsTheWriterAndLosesNothing() throws Exception {
        Communicator[] p = pair("", "");
        p[2].register(ByteBuffer.allocateDirect(64), Access.readWrite());
        int size = 32 << 20;
        byte[] data = random(2, size);
        Future<?> writer = helper.submit(() -> {
            for (int off = 0; off < size; off += 100_000) {
                p[1].write(ByteBuffer.wrap(data, off, Math.min(100_000, size - off)));
            }
            p[1].sync();
            return null;
        });
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
        while (System.nanoTime() < deadline && !writer.isDone()) {
            Thread.onSpinWait();
        }
        assertTrue(!writer.isDone(), "32 MiB cannot all be taken while nobody reads: the pipe must be bounded");
        ByteBuffer got = ByteBuffer.allocate(size);
        p[2].readFully(got);
        writer.get(20, TimeUnit.SECONDS);
        assertArrayEquals(data, got.array());
    }

    @Test
    @Timeout(30)
    void maxRegisteredBoundsTheRegisteredBytesPerConnection() throws Exception {
        Communicator[] p = pair("?maxRegistered=64k", "");
        MemoryRegion first = p[2].register(ByteBuffer.allocateDirect(48 * 1024), Access.readWrite());
        CommunicatorException e = assertThrows(CommunicatorException.class,
                () -> p[2].register(ByteBuffer.allocateDirect(32 * 1024), Access.readWrite()));
        assertTrue(e.getMessage().contains("maxRegistered=64k"), e.getMessage());
        first.close();
        MemoryRegion second = p[2].register(ByteBuffer.allocateDirect(32 * 1024), Access.readWrite());
        assertEquals(32 * 1024, second.descriptor().length());
    }

    @Test
    @Timeout(30)
    void aDescriptorOfAnotherTransportIsRefusedLocally() throws Exception {
        Communicator[] p = pair("", "");
        RegionDescriptor foreign = new RegionDescriptor(0x1000, 64, Access.readWrite(), new byte[] {1, 2, 3});
        RemoteAccessException e = assertThrows(RemoteAccessException.class,
                () -> p[1].put(ByteBuffer.allocate(8), foreign, 0));
        assertTrue(e.getMessage().contains("not a tcp:// region"), e.getMessage());
    }

    @Test
    @Timeout(30)
    void concurrentPutsAndGetsFromSeveralThreadsAllComplete() throws Exception {
        Communicator[] p = pair("", "?busyPoll=20us");
        int slice = 16 * 1024;
        int threads = 4;
        ByteBuffer memory = ByteBuffer.allocateDirect(slice * threads);
        RegionDescriptor d = p[2].register(memory, Access.readWrite()).descriptor();
        List<Future<?>> ops = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int id = t;
            ops.add(helper.submit(() -> {
                for (int round = 0; round < 50; round++) {
                    byte[] data = random(100L * id + round, slice);
                    p[1].put(ByteBuffer.wrap(data), d, (long) id * slice);
                    ByteBuffer back = ByteBuffer.allocate(slice);
                    p[1].get(d, (long) id * slice, back);
                    assertArrayEquals(data, back.array(), "thread " + id + " round " + round);
                }
                return null;
            }));
        }
        for (Future<?> f : ops) {
            f.get(25, TimeUnit.SECONDS);
        }
    }

    @Test
    @Timeout(30)
    void aGetToATargetThatClosedFailsInsteadOfHanging() throws Exception {
        Communicator[] p = pair("", "");
        RegionDescriptor d = p[2].register(ByteBuffer.allocateDirect(64), Access.readWrite()).descriptor();
        p[2].close();
        assertThrows(java.io.IOException.class, () -> p[1].get(d, 0, ByteBuffer.allocate(8)),
                "a target that closed never answers; the get must fail, not hang");
    }

    @Test
    @Timeout(30)
    void aCloseFailsTheOperationInFlightAndEveryLaterCallEachWithAnExceptionOfItsOwn() throws Exception {
        RemoteMemory memory = new RemoteMemory(() -> "the peer", 1 << 20, 0);
        RemoteMemory.Op inFlight = memory.begin(null);
        memory.failClosed();
        IOException first = assertThrows(AsynchronousCloseException.class, () -> memory.begin(null));
        IOException second = assertThrows(AsynchronousCloseException.class,
                () -> memory.register(ByteBuffer.allocateDirect(64), Set.of(Access.REMOTE_READ)));
        assertNotSame(first, second);
        // made where it was thrown: the caller's frames, not close's
        assertTrue(Arrays.stream(second.getStackTrace()).anyMatch(f -> f.getMethodName().startsWith("lambda$")),
                Arrays.toString(second.getStackTrace()));
        assertTrue(inFlight.getAsBoolean(), "the operation in flight was not finished by the close");
        IOException failed = assertThrows(AsynchronousCloseException.class, () -> inFlight.await(0, "put"));
        assertNotSame(first, failed);
    }
}
