package io.rdmacomm.testkit;

import static io.rdmacomm.testkit.Harness.assertBytes;
import static io.rdmacomm.testkit.Harness.await;
import static io.rdmacomm.testkit.Harness.direct;
import static io.rdmacomm.testkit.Harness.exchange;
import static io.rdmacomm.testkit.Harness.random;
import static io.rdmacomm.testkit.Harness.readN;
import static io.rdmacomm.testkit.Harness.writeAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.Endpoint;
import io.rdmacomm.api.EndpointOption;
import io.rdmacomm.testkit.Harness.Pair;
import io.rdmacomm.testkit.TransportUnderTest.SilentServer;
import java.io.EOFException;
import java.io.IOException;
import java.net.ConnectException;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.channels.ByteChannel;
import java.nio.channels.ClosedChannelException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The stream contract of {@link Communicator}, run against one transport. A transport passes it with a one-line
 * subclass in its test sources:
 *
 * <pre>{@code
 * class TcpContractTest extends CommunicatorContractTest {
 *     TcpContractTest() { super(TransportUnderTest.of("tcp://127.0.0.1:0")); }
 * }
 * }</pre>
 *
 * <p>Every test closes all it opened, then checks that no thread of the transport ({@code rdmacomm-<scheme>-*})
 * outlives the close. The tests of the close, and the harness, are in the package-private superclass
 * {@code CloseContractTest}, which a subclass of this kit runs with these. See {@link TransportUnderTest} for the
 * hooks a non-socket transport replaces.
 */
public abstract class CommunicatorContractTest extends CloseContractTest {
    protected CommunicatorContractTest(TransportUnderTest transport) {
        super(transport);
    }

    @Test
    @Timeout(30)
    void serveReportsTheBoundEndpointAndAcceptsAClient() throws Exception {
        Communicator server = h.serve();
        Endpoint bound = server.endpoint();
        assertEquals(transport.scheme(), bound.scheme());
        if (transport.picksPorts()) {
            assertNotEquals(0, bound.port(), "endpoint() after serve() on port 0 must report the bound port");
        }
        Communicator unconnected = h.openClient(bound);
        assertEquals("unconnected", unconnected.peerName());

        Pair p = h.pair(server);
        assertTrue(p.client().isOpen());
        assertTrue(p.accepted().isOpen());
        assertEquals(bound.authority(), p.accepted().endpoint().authority(),
                "an accepted communicator names the server endpoint");
        assertNotEquals("unconnected", p.client().peerName());
        assertNotEquals("unconnected", p.accepted().peerName());
        Harness.assertUsable(p);
    }

    @Test
    @Timeout(30)
    void fullDuplexExchangeFromTwoThreadsOnEachSide() throws Exception {
        Pair p = h.pair();
        int size = 4 * MIB;
        byte[] up = random(1, size);
        byte[] down = random(2, size);
        Future<?> clientWrites = h.async(() -> {
            writeAll(p.client(), up, 64 * 1024);
            return null;
        });
        Future<?> serverWrites = h.async(() -> {
            writeAll(p.accepted(), down, 48 * 1024 + 7);
            return null;
        });
        Future<byte[]> serverReads = h.async(() -> readN(p.accepted(), size));
        Future<byte[]> clientReads = h.async(() -> readN(p.client(), size));
        await(clientWrites);
        await(serverWrites);
        assertBytes(up, await(serverReads), "client to server");
        assertBytes(down, await(clientReads), "server to client");
    }

    @Test
    @Timeout(30)
    void shortReadsAreNormalAndReadFullyFillsTheBuffer() throws Exception {
        Pair p = h.pair();
        byte[] small = random(3, 10);
        writeAll(p.client(), small, small.length);
        ByteBuffer big = ByteBuffer.allocate(MIB);
        int n = p.accepted().read(big);
        assertTrue(n >= 1 && n <= small.length, "read returned " + n + ", expected 1.." + small.length);
        ByteBuffer rest = ByteBuffer.allocate(small.length - n);
        p.accepted().readFully(rest);
        big.flip();
        byte[] got = new byte[small.length];
        big.get(got, 0, n);
        rest.flip().get(got, n, small.length - n);
        assertBytes(small, got, "short read then readFully");

        assertEquals(0, p.accepted().read(ByteBuffer.allocate(0)), "read into a full buffer returns 0");

        Communicator oneByte = Faults.oneByteReads(p.accepted());
        byte[] msg = random(4, 1000);
        writeAll(p.client(), msg, 333);
        ByteBuffer first = ByteBuffer.allocate(100);
        assertEquals(1, oneByte.read(first), "the one-byte-read wrapper must return exactly one byte");
        ByteBuffer restOfMsg = ByteBuffer.allocate(msg.length - 1);
        oneByte.readFully(restOfMsg);
        byte[] all = new byte[msg.length];
        all[0] = first.get(0);
        System.arraycopy(restOfMsg.array(), 0, all, 1, msg.length - 1);
        assertBytes(msg, all, "readFully over one-byte reads");
    }

    @Test
    @Timeout(30)
    void readFullyThrowsEofExceptionNamingExpectedAndArrivedBytes() throws Exception {
        Pair p = h.pair();
        byte[] part = random(5, 37);
        writeAll(p.client(), part, part.length);
        p.client().close();
        ByteBuffer dst = ByteBuffer.allocate(100);
        EOFException e = assertThrows(EOFException.class, () -> p.accepted().readFully(dst));
        String m = String.valueOf(e.getMessage());
        assertTrue(m.contains("37") && m.contains("100"), "EOFException message must say 37 of 100 bytes: " + m);
        assertEquals(37, dst.position(), "the bytes that arrived stay in the buffer");
        byte[] got = new byte[37];
        dst.flip().get(got);
        assertBytes(part, got, "bytes before end of stream");
    }

    @Test
    @Timeout(30)
    void writeTakesAllBytesOfALargeBufferWhileThePeerReads() throws Exception {
        Pair p = h.pair();
        int size = 8 * MIB;
        byte[] data = random(6, size);
        Future<byte[]> reader = h.async(() -> readN(p.accepted(), 2 * size));
        ByteBuffer directSrc = direct(data);
        p.client().write(directSrc);
        assertEquals(0, directSrc.remaining(), "write(direct 8 MiB) must take every byte");
        ByteBuffer heapSrc = ByteBuffer.wrap(data);
        p.client().write(heapSrc);
        assertEquals(0, heapSrc.remaining(), "write(heap 8 MiB) must take every byte");
        p.client().sync();
        byte[] got = await(reader);
        assertBytes(data, Arrays.copyOfRange(got, 0, size), "direct 8 MiB");
        assertBytes(data, Arrays.copyOfRange(got, size, 2 * size), "heap 8 MiB");
    }

    /**
     * tryWrite takes what the transport can take without waiting (nothing at all, -1, where it cannot tell), never
     * waits for a peer that reads nothing yet, reports exactly what it took, and the bytes it took arrive in order
     * before those of a write() after it, with a close after the writes checked too.
     */
    @Test
    @Timeout(60)
    void tryWriteTakesWhatFitsWithoutWaitingAndItArrivesInOrder() throws Exception {
        Pair p = h.pair();
        byte[] data = random(22, 4 * MIB);
        ByteBuffer src = ByteBuffer.wrap(data);
        long start = System.nanoTime();
        tryWriteWhileTaken(p.client(), src, () -> 64 * 1024, start + TimeUnit.HOURS.toNanos(1));
        assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(10),
                "tryWrite waited for a peer that reads nothing");
        Future<byte[]> reader = h.async(() -> readN(p.accepted(), data.length));
        p.client().write(src);
        p.client().sync();
        assertBytes(data, await(reader), "what tryWrite took, then what write() sent");
        p.client().close();
        assertThrows(ClosedChannelException.class, () -> p.client().tryWrite(ByteBuffer.allocate(1)));
    }

    /**
     * What tryWrite took leaves on its own: the writer fills what the transport takes while the peer reads nothing,
     * then only waits; the peer, reading late, gets every byte taken, in order, with no write or sync after them.
     */
    @Test
    @Timeout(60)
    void bytesTryWriteTookArriveWithoutASync() throws Exception {
        Pair p = h.pair();
        byte[] data = random(24, 8 * MIB);
        ByteBuffer src = ByteBuffer.wrap(data);
        // odd sizes, so that frames and segments end mid-buffer
        Random sizes = new Random(25);
        int last = tryWriteWhileTaken(p.client(), src, () -> 1 + sizes.nextInt(200_000),
                System.nanoTime() + TimeUnit.SECONDS.toNanos(5));
        org.junit.jupiter.api.Assumptions.assumeFalse(last < 0 && src.position() == 0,
                transport.scheme() + ":// has no tryWrite (it returned -1)");
        int taken = src.position();
        assertTrue(taken > 0, "tryWrite took nothing on a fresh connection");
        byte[] expected = Arrays.copyOf(data, taken);
        // within 8 s: before the first heartbeat (a third of the default 30 s liveness), which would carry them too
        assertBytes(expected, await(h.async(() -> readN(p.accepted(), taken)), Duration.ofSeconds(8)),
                "the " + taken + " bytes tryWrite took, read late, with nothing written or synced after them");
    }

    /**
     * Offers {@code src} to tryWrite in slices of {@code sliceBytes} until it takes less than 1 byte, all of it is
     * taken or {@code deadline} (nanoTime) passes, checking that each call reports what left its slice; returns the
     * last call's result.
     */
    private static int tryWriteWhileTaken(Communicator c, ByteBuffer src, java.util.function.IntSupplier sliceBytes,
            long deadline) throws IOException {
        int n = 0;
        while (src.hasRemaining() && System.nanoTime() - deadline < 0) {
            int before = src.position();
            ByteBuffer slice = src.duplicate().limit(Math.min(src.limit(), before + sliceBytes.getAsInt()));
            n = c.tryWrite(slice);
            assertEquals(before + Math.max(0, n), slice.position(), "tryWrite returned " + n + " but took "
                    + (slice.position() - before) + " bytes");
            src.position(slice.position());
            if (n <= 0) {
                break;
            }
        }
        return n;
    }

    /** The gathering tryWrite: what it reports is what left the buffers, in order, and it arrives so. */
    @Test
    @Timeout(60)
    void aGatheringTryWriteTakesTheBuffersInOrder() throws Exception {
        Pair p = h.pair();
        byte[] data = random(23, 3 * MIB);
        ByteBuffer[] srcs = {ByteBuffer.wrap(data, 0, MIB).slice(), ByteBuffer.wrap(data, MIB, MIB).slice(),
            ByteBuffer.wrap(data, 2 * MIB, MIB).slice()};
        long n = p.client().tryWrite(srcs, 0, 3);
        long left = 0;
        for (ByteBuffer b : srcs) {
            left += b.remaining();
        }
        assertEquals(data.length - Math.max(0, n), left, "tryWrite returned " + n);
        for (int i = 1; i < srcs.length; i++) {
            if (srcs[i].position() > 0) {
                assertEquals(0, srcs[i - 1].remaining(), "buffer " + i + " taken before buffer " + (i - 1));
            }
        }
        Future<byte[]> reader = h.async(() -> readN(p.accepted(), data.length));
        for (ByteBuffer b : srcs) {
            p.client().write(b);
        }
        p.client().sync();
        assertBytes(data, await(reader), "what tryWrite took of the buffers, then what write() sent");
    }

    @Test
    @Timeout(30)
    void syncDeliversWithoutFurtherActionOfTheWriter() throws Exception {
        Pair p = h.pair();
        byte[] msg = random(7, 1000);
        p.client().write(ByteBuffer.wrap(msg));
        p.client().sync();
        // This thread, the writer, now only waits: the bytes must arrive on their own.
        Future<byte[]> reader = h.async(() -> readN(p.accepted(), msg.length));
        assertBytes(msg, await(reader, Duration.ofSeconds(10)), "bytes after sync");
    }

    @Test
    @Timeout(60)
    void orderAndIntegrityOverSixtyFourMiBOfRandomlySizedWrites() throws Exception {
        Pair p = h.pair();
        long total = 64L * MIB;
        byte[] pattern = random(8, 2 * MIB);
        Future<long[]> reader = h.async(() -> {
            CRC32 crc = new CRC32();
            Random sizes = new Random(10);
            ByteBuffer buf = ByteBuffer.allocateDirect(MIB);
            long count = 0;
            while (true) {
                buf.clear().limit(1 + sizes.nextInt(MIB));
                int n = p.accepted().read(buf);
                if (n < 0) {
                    break;
                }
                buf.flip();
                crc.update(buf);
                count += n;
            }
            assertEquals(-1, p.accepted().read(ByteBuffer.allocate(1)), "read after end of stream");
            return new long[] {count, crc.getValue()};
        });
        CRC32 crc = new CRC32();
        Random r = new Random(9);
        ByteBuffer directChunk = ByteBuffer.allocateDirect(MIB);
        long written = 0;
        for (int i = 0; written < total; i++) {
            int len = 1 + r.nextInt(MIB);
            int off = r.nextInt(pattern.length - len);
            crc.update(pattern, off, len);
            ByteBuffer src;
            if (i % 4 == 0) {
                src = directChunk.clear().put(pattern, off, len).flip();
            } else {
                src = ByteBuffer.wrap(pattern, off, len);
            }
            p.client().write(src);
            assertEquals(0, src.remaining(), "write must take every byte");
            written += len;
            if (i % 16 == 15) {
                p.client().sync();
            }
        }
        p.client().sync();
        p.client().close();
        long[] got = await(reader, Duration.ofSeconds(50));
        assertEquals(written, got[0], "bytes received");
        assertEquals(crc.getValue(), got[1], "CRC32 of the stream");
    }

    @Test
    @Timeout(30)
    void theFirstBytesGivenToConnectArriveFirstAndInOrderWithLaterWrites() throws Exception {
        Communicator server = h.serve();
        // small enough to go with a handshake where the transport sends a client's first bytes early, and far larger
        for (int size : new int[] {1, 37, 4096, 300_000}) {
            Future<Communicator> accepted = h.async(() -> h.track(server.accept()));
            Communicator client = h.openClient(server.endpoint());
            byte[] first = random(size, size);
            byte[] later = random(size + 1, 5000);
            ByteBuffer firstBuffer = ByteBuffer.wrap(first);
            Future<byte[]> serverReads = h.async(() -> readN(await(accepted), size + later.length));
            client.connect(firstBuffer);
            assertEquals(0, firstBuffer.remaining(), "connect(first) takes every byte of first (" + size + " B)");
            assertNotEquals("unconnected", client.peerName());
            writeAll(client, later, 1000);
            byte[] expected = Arrays.copyOf(first, size + later.length);
            System.arraycopy(later, 0, expected, size, later.length);
            assertBytes(expected, await(serverReads), "first " + size + " B, then 5000 B");
            Harness.assertUsable(new Pair(server, client, await(accepted)));
        }
    }

    @Test
    @Timeout(60)
    void aServerThatAnswersAndClosesWithoutReadingTheFirstBytesIsStillHeard() throws Exception {
        Communicator server = h.serve();
        byte[] answer = "refused: busy".getBytes(StandardCharsets.US_ASCII);
        Future<Void> answered = h.async(() -> {
            Communicator peer = h.track(server.accept());
            // one byte of the first bytes: the client is past its handshake (a close during it fails the connect,
            // which is another case) and writing; the rest stays unread
            peer.readFully(ByteBuffer.allocate(1));
            peer.write(ByteBuffer.wrap(answer));
            peer.sync();
            peer.close();
            return null;
        });
        Communicator client = h.openClient(server.endpoint());
        // more than any transport buffers for a peer that does not read: the write of these fails once it closed
        client.connect(ByteBuffer.wrap(new byte[32 * MIB]));
        await(answered);
        assertBytes(answer, readN(client, answer.length), "what the server said before it closed");
        assertThrows(IOException.class, () -> {
            client.write(ByteBuffer.wrap(new byte[MIB]));
            client.sync();
        }, "the connection's failure is reported by a later write or sync");
    }

    @Test
    @Timeout(30)
    void connectWithFirstBytesFailsAsConnectDoesAndLeavesTheBytesToTheCaller() throws Exception {
        Endpoint refused = transport.refusedEndpoint();
        Communicator c = h.openClient(refused, EndpointOption.CONNECT_TIMEOUT, "5s");
        ByteBuffer one = ByteBuffer.wrap(new byte[] {1});
        ConnectException e = assertThrows(ConnectException.class, () -> c.connect(one));
        assertTrue(String.valueOf(e.getMessage()).contains(refused.authority()),
                "ConnectException must name " + refused.authority() + ": " + e.getMessage());
        assertEquals(1, one.remaining(), "a failed connect(first) takes none of first");
        SilentServer silent = h.track(transport.startSilentServer());
        Communicator d = h.openClient(silent.endpoint(), EndpointOption.CONNECT_TIMEOUT, "500ms");
        ByteBuffer three = ByteBuffer.wrap(new byte[] {1, 2, 3});
        assertThrows(SocketTimeoutException.class, () -> d.connect(three),
                "a server that never answers the handshake: connect(first) returns only once the server accepted");
        assertEquals(3, three.remaining(), "a failed connect(first) takes none of first");
    }

    @Test
    @Timeout(30)
    void refusedConnectThrowsConnectExceptionNamingTheEndpoint() throws Exception {
        Endpoint refused = transport.refusedEndpoint();
        Communicator c = h.openClient(refused, EndpointOption.CONNECT_TIMEOUT, "5s");
        ConnectException e = assertThrows(ConnectException.class, c::connect);
        assertTrue(String.valueOf(e.getMessage()).contains(refused.authority()),
                "ConnectException must name " + refused.authority() + ": " + e.getMessage());
    }

    @Test
    @Timeout(30)
    void connectTimesOutAgainstAServerThatNeverAnswersTheHandshake() throws Exception {
        SilentServer silent = h.track(transport.startSilentServer());
        Communicator c = h.openClient(silent.endpoint(), EndpointOption.CONNECT_TIMEOUT, "500ms");
        long start = System.nanoTime();
        SocketTimeoutException e = assertThrows(SocketTimeoutException.class, c::connect);
        long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        assertTrue(String.valueOf(e.getMessage()).contains(silent.endpoint().authority()),
                "SocketTimeoutException must name " + silent.endpoint().authority() + ": " + e.getMessage());
        assertTrue(millis >= 400 && millis < 5000, "connectTimeout=500ms, connect gave up after " + millis + " ms");
    }

    @Test
    @Timeout(30)
    void garbageInsteadOfTheHandshakeIsDroppedAndTheServerKeepsServing() throws Exception {
        Communicator server = h.serve(EndpointOption.HANDSHAKE_TIMEOUT, "2s");
        Future<Communicator> accepted = h.async(() -> h.track(server.accept()));
        ByteChannel raw = h.track(transport.connectRaw(server.endpoint()));
        byte[] garbage = ("GET / HTTP/1.1\r\nHost: not-a-communicator\r\n\r\n" + "x".repeat(200))
                .getBytes(StandardCharsets.US_ASCII);
        ByteBuffer g = ByteBuffer.wrap(garbage);
        while (g.hasRemaining()) {
            raw.write(g);
        }
        Future<String> dropped = h.async(() -> {
            ByteBuffer b = ByteBuffer.allocate(4096);
            try {
                while (raw.read(b.clear()) >= 0) {
                    // a reply to garbage is allowed; the server must still hang up
                }
                return "end of stream";
            } catch (IOException e) {
                return e.toString();
            }
        });
        try {
            Harness.await(dropped, Duration.ofSeconds(15));
        } catch (AssertionError e) {
            throw new AssertionError("the server did not hang up within 15 s (handshakeTimeout=2s) on a peer that"
                    + " sent garbage instead of the handshake", e);
        }

        Communicator client = h.connect(server.endpoint(), EndpointOption.CONNECT_TIMEOUT, "10s");
        Communicator peer = await(accepted);
        exchange(client, peer, 12);
        exchange(peer, client, 13);
    }

    @Test
    @Timeout(60)
    void sixtyFourConcurrentPeersEachExchangeVerifiedData() throws Exception {
        int peers = 64;
        int rounds = 8;
        int size = 16 * 1024;
        Communicator server = h.serve();
        Future<?> acceptLoop = h.async(() -> {
            for (int i = 0; i < peers; i++) {
                Communicator a = h.track(server.accept());
                h.async(() -> echo(a));
            }
            return null;
        });
        CountDownLatch allConnected = new CountDownLatch(peers);
        List<Future<Integer>> clients = new ArrayList<>();
        for (int i = 0; i < peers; i++) {
            int id = i;
            clients.add(h.async(() -> {
                Communicator c = h.connect(server.endpoint());
                allConnected.countDown();
                assertTrue(allConnected.await(30, TimeUnit.SECONDS), "not all peers connected");
                for (int r = 0; r < rounds; r++) {
                    byte[] msg = random(1000L * id + r, size);
                    writeAll(c, msg, size);
                    assertBytes(msg, readN(c, size), "echo to peer " + id + " round " + r);
                }
                c.close();
                return id;
            }));
        }
        for (int i = 0; i < peers; i++) {
            assertEquals(i, await(clients.get(i), Duration.ofSeconds(50)));
        }
        await(acceptLoop);
    }

    private static Void echo(Communicator c) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(8192);
        while (c.read(b.clear()) >= 0) {
            c.write(b.flip());
            c.sync();
        }
        c.close();
        return null;
    }

    @Test
    @Timeout(30)
    void misuseIsAnIllegalStateException() throws Exception {
        Endpoint e = transport.serverEndpoint();
        Communicator fresh = h.track(transport.open(e));
        assertThrows(IllegalStateException.class, () -> fresh.read(ByteBuffer.allocate(1)));
        assertThrows(IllegalStateException.class, () -> fresh.write(ByteBuffer.allocate(1)));
        assertThrows(IllegalStateException.class, fresh::accept);

        Communicator server = h.serve();
        assertThrows(IllegalStateException.class, server::serve, "serve twice");
        assertThrows(IllegalStateException.class, server::connect, "connect after serve");
        assertThrows(IllegalStateException.class, () -> server.read(ByteBuffer.allocate(1)), "read on a server");

        Pair p = h.pair(server);
        assertThrows(IllegalStateException.class, p.client()::connect, "connect twice");
        assertThrows(IllegalStateException.class, p.client()::serve, "serve after connect");
        assertThrows(IllegalStateException.class, p.client()::accept, "accept on a client");
        Harness.assertUsable(p);
    }

    @Test
    @Timeout(30)
    void readTimeoutThrowsSocketTimeoutException() throws Exception {
        Pair p = h.pair(EndpointOption.READ_TIMEOUT, "300ms");
        long start = System.nanoTime();
        assertThrows(SocketTimeoutException.class, () -> p.client().read(ByteBuffer.allocate(8)));
        long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        assertTrue(millis >= 250 && millis < 5000, "readTimeout=300ms, read gave up after " + millis + " ms");
    }

    @Test
    @Timeout(30)
    void acceptTimeoutThrowsSocketTimeoutException() throws Exception {
        Communicator server = h.serve(EndpointOption.ACCEPT_TIMEOUT, "300ms");
        long start = System.nanoTime();
        assertThrows(SocketTimeoutException.class, server::accept);
        long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        assertTrue(millis >= 250 && millis < 5000, "acceptTimeout=300ms, accept gave up after " + millis + " ms");
        Harness.assertUsable(h.pairRetryingAccept(server));
    }
}
