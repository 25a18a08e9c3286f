package io.rdmacomm.rdma;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmacomm.api.Access;
import io.rdmacomm.api.CommunicatorException;
import io.rdmacomm.api.Endpoint;
import io.rdmacomm.api.HandshakeException;
import io.rdmacomm.api.MemoryRegion;
import io.rdmacomm.api.RegionDescriptor;
import io.rdmacomm.api.RemoteAccessException;
import io.rdmacomm.rdma.spi.ChannelHandler;
import io.rdmacomm.rdma.spi.Completion;
import io.rdmacomm.rdma.spi.RdmaChannel;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.channels.AsynchronousCloseException;
import java.nio.channels.ClosedChannelException;
import java.time.Duration;
import java.util.EnumSet;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The protocol engine against the in-memory provider: stream, backpressure, faults, remote memory. */
@Timeout(30)
class EngineTest {
    private final InMemoryProvider provider = new InMemoryProvider();
    private RdmaCommunicator server;
    private RdmaCommunicator client;
    private RdmaCommunicator accepted;

    private void open(String options) throws IOException {
        server = new RdmaCommunicator(Endpoint.parse("rdma://127.0.0.1:0" + options), provider);
        server.serve();
        client = new RdmaCommunicator(server.endpoint(), provider);
        client.connect();
        accepted = (RdmaCommunicator) server.accept();
    }

    @AfterEach
    void closeAll() {
        for (RdmaCommunicator c : new RdmaCommunicator[] {client, accepted, server}) {
            if (c != null) {
                c.close();
            }
        }
    }

    private InMemoryProvider.Chan clientChannel() {
        return provider.channels.values().stream().filter(c -> c.name.startsWith("client")).findFirst()
                .orElseThrow();
    }

    private static byte[] pattern(int n, long seed) {
        byte[] b = new byte[n];
        new Random(seed).nextBytes(b);
        return b;
    }

    private static void waitFor(BooleanSupplier condition, String what) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out waiting for " + what);
            }
            Thread.onSpinWait();
        }
    }

    @Test
    void mixedSizesArriveInOrderThroughRingAndZeroCopy() throws Exception {
        open("?ringSize=64k&zeroCopyThreshold=16k");
        byte[] data = pattern(3_000_000, 1);
        AtomicReference<Thread> reader = new AtomicReference<>();
        CompletableFuture<byte[]> received = CompletableFuture.supplyAsync(() -> {
            reader.set(Thread.currentThread());
            ByteBuffer all = ByteBuffer.allocate(data.length);
            ByteBuffer direct = ByteBuffer.allocateDirect(200_000);
            Random r = new Random(2);
            try {
                while (all.hasRemaining()) {
                    ByteBuffer dst = r.nextBoolean() ? direct.clear() : ByteBuffer.allocate(1 + r.nextInt(5000));
                    dst.limit(Math.min(dst.capacity(), all.remaining()));
                    int n = accepted.read(dst);
                    assertTrue(n > 0, "read returned " + n);
                    all.put(dst.flip());
                }
                return all.array();
            } catch (IOException e) {
                throw new RuntimeException(e);
            }
        });
        Random r = new Random(3);
        ByteBuffer directSrc = ByteBuffer.allocateDirect(300_000);
        for (int off = 0; off < data.length;) {
            int n = Math.min(data.length - off, 1 + r.nextInt(r.nextBoolean() ? 100 : 300_000));
            ByteBuffer src = r.nextBoolean() ? directSrc.clear().put(data, off, n).flip()
                    : ByteBuffer.wrap(data, off, n);
            if (src.isDirect() && client.statistics().zeroCopyBytesWritten() == 0) {
                // zero copy needs the reader blocked with nothing to read (it then advertises a direct dst): until
                // one write took that path, let the reader drain before direct writes instead of racing it
                client.sync();
                waitFor(() -> reader.get() != null && reader.get().getState() == Thread.State.TIMED_WAITING,
                        "the reader to block");
            }
            client.write(src);
            assertFalse(src.hasRemaining());
            off += n;
            if (r.nextInt(4) == 0) {
                client.sync();
            }
        }
        client.sync();
        assertArrayEquals(data, received.get(20, TimeUnit.SECONDS));
        assertTrue(client.statistics().zeroCopyBytesWritten() > 0, "no write took the zero-copy path");
    }

    @ParameterizedTest(name = "{0} then {1} bytes")
    @CsvSource({"1500, 2500", "1000, 2000", "2000, 1000", "500, 700"})
    void reorderedNotificationsAreReadInStreamOrder(int first, int second) throws Exception {
        // sizes above Sender.INLINE_MAX go as a ring write + DATA, the others inside DATA_INLINE: every mix
        open("?ringSize=8k");
        InMemoryProvider.Chan ch = clientChannel();
        ch.swapNextNotification = true;
        byte[] data = pattern(first + second, 4);
        client.write(ByteBuffer.wrap(data, 0, first));
        client.sync();
        client.write(ByteBuffer.wrap(data, first, second));
        client.sync();
        ByteBuffer got = ByteBuffer.allocate(first + second);
        accepted.readFully(got);
        assertArrayEquals(data, got.array());
        assertFalse(ch.swapNextNotification, "no notification was held back");
        assertEquals((first > Sender.INLINE_MAX ? 1 : 0) + (second > Sender.INLINE_MAX ? 1 : 0),
                ch.writes.get(), "ring writes");
    }

    @Test
    void writerBlocksOnCreditsUntilTheReaderConsumesAndNothingIsDropped() throws Exception {
        open("?ringSize=4k");
        byte[] data = pattern(64 * 1024, 5);
        CompletableFuture<Void> writer = CompletableFuture.runAsync(() -> {
            try {
                client.write(ByteBuffer.wrap(data));
                client.sync();
            } catch (IOException e) {
                throw new RuntimeException(e);
            }
        });
        InMemoryProvider.Chan ch = clientChannel();
        waitFor(() -> ch.writes.get() > 0, "the first ring write");
        int before = ch.writes.get();
        assertThrows(java.util.concurrent.TimeoutException.class, () -> writer.get(300, TimeUnit.MILLISECONDS));
        assertEquals(before, ch.writes.get(), "the writer kept writing without credits");
        ByteBuffer got = ByteBuffer.allocate(data.length);
        accepted.readFully(got);
        writer.get(10, TimeUnit.SECONDS);
        assertArrayEquals(data, got.array());
    }

    @Test
    void blockedWriterTimesOutWithReadTimeout() throws Exception {
        open("?ringSize=4k&readTimeout=200ms");
        long start = System.nanoTime();
        SocketTimeoutException e = assertThrows(SocketTimeoutException.class,
                () -> client.write(ByteBuffer.allocate(16 * 1024)));
        assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(5));
        assertTrue(e.getMessage().contains("write"), e.getMessage());
    }

    @ParameterizedTest(name = "{0} bytes")
    @CsvSource({"100", "5000"}) // DATA_INLINE and ring write
    void failedCompletionFailsTheNextWriteOrSync(int size) throws Exception {
        open("");
        clientChannel().failWrites.set(new CommunicatorException("injected: remote operation error"));
        client.write(ByteBuffer.wrap(pattern(size, 6)));
        IOException e = assertThrows(IOException.class, () -> client.sync());
        assertTrue(e.getMessage().contains("injected"), e.getMessage());
    }

    @Test
    void peerVanishingMidWriteFailsTheBlockedWriter() throws Exception {
        open("?ringSize=4k");
        CompletableFuture<Void> writer = CompletableFuture.runAsync(() -> {
            try {
                client.write(ByteBuffer.allocate(1 << 20));
            } catch (IOException e) {
                throw new RuntimeException(e);
            }
        });
        InMemoryProvider.Chan ch = clientChannel();
        waitFor(() -> ch.writes.get() > 0, "the first ring write");
        ch.vanish();
        ExecutionException e = assertThrows(ExecutionException.class, () -> writer.get(10, TimeUnit.SECONDS));
        assertTrue(e.getCause().getCause() instanceof IOException, e.toString());
        assertTrue(e.getCause().getCause().getMessage().contains("vanished"), e.getCause().getCause().getMessage());
    }

    @Test
    void peerCloseGivesEndOfStreamAfterTheData() throws Exception {
        open("");
        client.write(ByteBuffer.wrap(new byte[] {1, 2, 3}));
        client.close();
        ByteBuffer got = ByteBuffer.allocate(10);
        assertEquals(3, accepted.read(got));
        assertEquals(-1, accepted.read(got));
        assertThrows(IOException.class, () -> {
            accepted.write(ByteBuffer.allocate(1));
            accepted.sync();
        });
    }

    @Test
    void closeUnblocksReaderAndLaterCallsThrowClosedChannel() throws Exception {
        open("");
        CompletableFuture<Integer> reader = CompletableFuture.supplyAsync(() -> {
            try {
                return accepted.read(ByteBuffer.allocate(10));
            } catch (IOException e) {
                throw new RuntimeException(e);
            }
        });
        waitFor(() -> !reader.isDone() && threadParkedIn("read"), "the reader to block");
        accepted.close();
        ExecutionException e = assertThrows(ExecutionException.class, () -> reader.get(5, TimeUnit.SECONDS));
        assertTrue(e.getCause().getCause() instanceof AsynchronousCloseException, e.toString());
        assertThrows(ClosedChannelException.class, () -> accepted.read(ByteBuffer.allocate(1)));
    }

    private static boolean threadParkedIn(String method) {
        return Thread.getAllStackTraces().keySet().stream().anyMatch(t ->
                (t.getState() == Thread.State.TIMED_WAITING || t.getState() == Thread.State.WAITING)
                && java.util.Arrays.stream(t.getStackTrace()).anyMatch(f -> f.getMethodName().equals(method)
                        && f.getClassName().equals(Connection.class.getName())));
    }

    @Test
    void garbageHandshakeIsDroppedAndTheServerKeepsServing() throws Exception {
        server = new RdmaCommunicator(Endpoint.parse("rdma://127.0.0.1:0?handshakeTimeout=2s"), provider);
        server.serve();
        try (SocketChannel raw = SocketChannel.open(new InetSocketAddress("127.0.0.1", server.endpoint().port()))) {
            raw.write(ByteBuffer.wrap("GET / HTTP/1.1\r\n".repeat(4).getBytes(StandardCharsets.US_ASCII)));
            assertEquals(-1, raw.read(ByteBuffer.allocate(64)), "the server hangs up on garbage");
        }
        client = new RdmaCommunicator(server.endpoint(), provider);
        client.connect();
        accepted = (RdmaCommunicator) server.accept();
        client.write(ByteBuffer.wrap(new byte[] {42}));
        client.sync();
        ByteBuffer one = ByteBuffer.allocate(1);
        accepted.readFully(one);
        assertEquals(42, one.get(0));
    }

    @Test
    void aServerRingOutOfReachIsReportedAsSuchAndTheServerServesTheNextClient() throws Exception {
        server = new RdmaCommunicator(Endpoint.parse("rdma://127.0.0.1:0"), provider);
        server.serve();
        provider.refuseClientUnpacks = "Shared memory error (test)";
        try (RdmaCommunicator failing = new RdmaCommunicator(server.endpoint(), provider)) {
            IOException e = assertThrows(IOException.class, failing::connect);
            String m = e.getMessage();
            assertTrue(m.startsWith("handshake with ") && m.contains(server.endpoint().toString()), m);
            assertTrue(m.contains("receive ring its HELLO named is out of reach")
                    && m.contains("closed the connection during the handshake")
                    && m.endsWith("Shared memory error (test)"), m);
        }
        provider.refuseClientUnpacks = null;
        client = new RdmaCommunicator(server.endpoint(), provider);
        client.connect();
        client.write(ByteBuffer.wrap(new byte[] {42}));
        client.sync();
        // the failed client's connection may come first (and end at once): the next is the one that writes
        ByteBuffer one = ByteBuffer.allocate(1);
        for (int tries = 0; one.hasRemaining() && tries < 2; tries++) {
            accepted = (RdmaCommunicator) server.accept();
            try {
                accepted.read(one);
            } catch (IOException ended) {
                accepted.close();
            }
        }
        assertEquals(42, one.get(0));
    }

    @Test
    void clientRejectsAServerSpeakingSomethingElse() throws Exception {
        try (ServerSocketChannel fake = ServerSocketChannel.open().bind(new InetSocketAddress("127.0.0.1", 0))) {
            client = new RdmaCommunicator(Endpoint.parse("rdma://127.0.0.1:" + fake.socket().getLocalPort()),
                    provider);
            CompletableFuture<Void> connecting = CompletableFuture.runAsync(() -> {
                try {
                    client.connect();
                } catch (IOException e) {
                    throw new java.util.concurrent.CompletionException(e);
                }
            });
            try (SocketChannel s = fake.accept()) {
                s.write(ByteBuffer.wrap("SSH-2.0-OpenSSH_9.2\r\n".getBytes(StandardCharsets.US_ASCII)));
                ExecutionException e = assertThrows(ExecutionException.class, () -> connecting.get(10,
                        TimeUnit.SECONDS));
                assertTrue(e.getCause() instanceof HandshakeException, e.toString());
                assertTrue(e.getCause().getMessage().contains("53 53 48 2d"), e.getCause().getMessage());
            }
        }
        assertEquals(0, provider.nodeUsers.get(), "the failed connect released its node");
    }

    @Test
    void remoteMemoryChecksFailOnlyThatOperation() throws Exception {
        open("");
        ByteBuffer target = ByteBuffer.allocateDirect(1024);
        MemoryRegion writable = accepted.register(target, EnumSet.of(Access.REMOTE_WRITE));
        MemoryRegion readable = accepted.register(ByteBuffer.allocateDirect(64).put(0, (byte) 9),
                EnumSet.of(Access.REMOTE_READ));
        RegionDescriptor w = RegionDescriptor.fromBytes(writable.descriptor().toBytes());
        client.put(ByteBuffer.wrap(new byte[] {7, 8}), w, 10);
        assertEquals(7, target.get(10));
        assertEquals(8, target.get(11));
        ByteBuffer back = ByteBuffer.allocate(2);
        assertThrows(RemoteAccessException.class, () -> client.get(w, 10, back));
        assertThrows(RemoteAccessException.class, () -> client.put(ByteBuffer.allocate(2), w, 1023));
        RegionDescriptor forged = new RegionDescriptor(w.address(), 1 << 20, w.access(), w.key());
        assertThrows(RemoteAccessException.class, () -> client.put(ByteBuffer.allocate(2), forged, 2000));
        ByteBuffer nine = ByteBuffer.allocateDirect(1);
        client.get(readable.descriptor(), 0, nine);
        assertEquals(9, nine.get(0));
        writable.close();
        RemoteAccessException gone = assertThrows(RemoteAccessException.class,
                () -> client.put(ByteBuffer.allocate(1), w, 0));
        assertTrue(gone.getMessage().contains("unknown remote key") || gone.getMessage().contains("deregistered"));
        client.write(ByteBuffer.wrap(new byte[] {5}));
        client.sync();
        ByteBuffer one = ByteBuffer.allocate(1);
        accepted.readFully(one);
        assertEquals(5, one.get(0));
        readable.close();
    }

    @Test
    void registrationsAreBoundedByMaxRegistered() throws Exception {
        open("?ringSize=4k&maxRegistered=64k");
        assertEquals(8 * 1024, accepted.statistics().registeredBytes());
        MemoryRegion r = accepted.register(ByteBuffer.allocateDirect(32 * 1024), Access.readWrite());
        CommunicatorException e = assertThrows(CommunicatorException.class,
                () -> accepted.register(ByteBuffer.allocateDirect(32 * 1024), Access.readWrite()));
        assertTrue(e.getMessage().contains("maxRegistered"), e.getMessage());
        r.close();
        assertEquals(8 * 1024, accepted.statistics().registeredBytes());
        accepted.close();
        assertEquals(0, accepted.statistics().registeredBytes());
    }

    /** Sends {@code m} on the client's channel as it is, past the engine, and waits until it was sent. */
    private void sendRaw(ByteBuffer m) throws Exception {
        CompletableFuture<Void> sent = new CompletableFuture<>();
        clientChannel().send(m, new Completion() {
            @Override
            public void completed() {
                sent.complete(null);
            }

            @Override
            public void failed(IOException cause) {
                sent.completeExceptionally(cause);
            }
        });
        sent.get(5, TimeUnit.SECONDS);
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource({
        "cursor past the ring end, 8000, 500, 500, outside the 8192-byte ring",
        "length larger than the bytes carried, 0, 100, 10, carries 10",
        "negative length, 0, -1, 0, outside the 8192-byte ring"})
    void malformedInlineDataFailsTheReaderNamingTheProblem(String what, long cursor, int length, int carried,
            String expected) throws Exception {
        open("?ringSize=8k");
        ByteBuffer m = ByteBuffer.allocate(DataMessage.HEADER_LENGTH + carried).put(DataMessage.DATA_INLINE).putLong(0)
                .putLong(cursor).putInt(length);
        m.position(m.limit()).flip();
        sendRaw(m);
        CommunicatorException e = assertThrows(CommunicatorException.class,
                () -> accepted.readFully(ByteBuffer.allocate(1)));
        assertTrue(e.getMessage().contains("malformed message"), e.getMessage());
        assertTrue(e.getMessage().contains(expected), e.getMessage());
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource({
        "truncated CREDIT, 03 00 00 00 00, CREDIT, '5 bytes, expected 9'",
        "ACK of an unknown type, 0b 03 00 00 00 05, ACK, acknowledged type 3",
        "ZDATA of no bytes, 05 00 00 00 01 00 00 00 00 00 00 00 00 00 00 00 00, ZDATA, length 0",
        "unknown type, 63 01 02, type 99, unknown message type 99"})
    void malformedControlMessagesFailTheConnectionNamingTypeAndField(String what, String hex, String type,
            String reason) throws Exception {
        open("");
        sendRaw(ByteBuffer.wrap(java.util.HexFormat.of().parseHex(hex.replace(" ", ""))));
        CommunicatorException e = assertThrows(CommunicatorException.class,
                () -> accepted.readFully(ByteBuffer.allocate(1)));
        assertTrue(e.getMessage().contains("malformed message " + type + " from " + accepted.peerName() + ": "),
                e.getMessage());
        assertTrue(e.getMessage().contains(reason), e.getMessage());
        assertTrue(e.getMessage().contains(hex.substring(0, Math.min(hex.length(), 16 * 3 - 1))),
                "the first 16 bytes: " + e.getMessage());
    }

    @Test
    void largeDirectWritesGoStraightIntoTheRingAndReturnOnlyWhenTheSourceMayBeReused() throws Exception {
        open("?ringSize=256k");
        byte[] data = pattern(1 << 20, 9);
        CompletableFuture<byte[]> received = CompletableFuture.supplyAsync(() -> {
            try {
                ByteBuffer got = ByteBuffer.allocate(data.length); // heap: no advert, everything through the ring
                accepted.readFully(got);
                return got.array();
            } catch (IOException e) {
                throw new RuntimeException(e);
            }
        });
        ByteBuffer src = ByteBuffer.allocateDirect(96 * 1024);
        int writesBefore = clientChannel().writes.get();
        for (int off = 0; off < data.length; off += src.capacity()) {
            int n = Math.min(src.capacity(), data.length - off);
            src.clear();
            src.put(data, off, n).flip();
            client.write(src);
            // the write returned: the source is the caller's again, so scribbling on it must not reach the reader
            src.clear();
            src.put(new byte[src.capacity()]);
        }
        client.sync();
        assertArrayEquals(data, received.get(20, TimeUnit.SECONDS));
        // 96 KiB writes into a 256 KiB ring: each chunk of at least DIRECT_RING_MIN is one ring write of its own
        assertTrue(clientChannel().writes.get() - writesBefore >= data.length / src.capacity(),
                "ring writes: " + (clientChannel().writes.get() - writesBefore));
    }

    @Test
    void closeWaitsUntilThePeerHasProcessedEverythingEvenIfTheEndOvertakesMessages() throws Exception {
        open("?ringSize=64k");
        clientChannel().closeOvertakesMessages = true;
        byte[] data = pattern(200_000, 12);
        CompletableFuture<byte[]> received = CompletableFuture.supplyAsync(() -> {
            try {
                java.io.ByteArrayOutputStream got = new java.io.ByteArrayOutputStream();
                ByteBuffer buf = ByteBuffer.allocate(7000);
                for (int n; (n = accepted.read(buf.clear())) >= 0;) {
                    got.write(buf.array(), 0, n);
                }
                return got.toByteArray();
            } catch (IOException e) {
                throw new RuntimeException(e);
            }
        });
        for (int off = 0; off < data.length; off += 500) {
            client.write(ByteBuffer.wrap(data, off, Math.min(500, data.length - off)));
        }
        client.close();
        assertArrayEquals(data, received.get(20, TimeUnit.SECONDS));
    }
}
