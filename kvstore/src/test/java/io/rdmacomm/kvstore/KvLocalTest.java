package io.rdmacomm.kvstore;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmacomm.api.Access;
import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.Communicators;
import io.rdmacomm.api.Endpoint;
import io.rdmacomm.api.MemoryRegion;
import io.rdmacomm.kvstore.proto.OpenSessionReply;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The whole store in one JVM, data plane on local:// (the seed's mock mode, with the same checks), its data
 * connections served by one event loop; {@link KvLocalThreadPerConnectionTest} runs the same with a thread per
 * connection.
 */
@Timeout(60)
class KvLocalTest {
    private static final AtomicInteger NAMES = new AtomicInteger();
    private final List<AutoCloseable> open = new ArrayList<>();
    private KvServer server;
    private ValueTransfer transfer = ValueTransfer.AUTO;
    /** Options of the data endpoint, e.g. {@code ?readTimeout=1s}. */
    private String dataOptions = "";

    private KvServer start(long memory, long maxValue, int maxSessions, Duration attach) throws IOException {
        return start(memory, maxValue, 64, maxSessions, attach);
    }

    private KvServer start(long memory, long maxValue, int maxKey, int maxSessions, Duration attach)
            throws IOException {
        Endpoint data = Endpoint.parse("local://kv-local-" + NAMES.incrementAndGet() + dataOptions);
        server = KvServer.start(KvServerConfig.of("127.0.0.1", 0, data).withMemory(memory, maxValue)
                .withLimits(maxKey, maxSessions, attach).withValueTransfer(transfer).withLoops(loops()));
        return server;
    }

    /** A session's key array starts small and grows: keys of every length up to --max-key are served, in any order. */
    @Test
    void keysOfEveryLengthUpToTheLimitAreServedInAnyOrder() throws Exception {
        start(1 << 20, 64 * 1024, 65_535, 64, Duration.ofSeconds(10));
        KvClient kv = client(64 * 1024);
        int[] lengths = {1, 127, 128, 129, 1000, 65_535, 5, 4096};
        for (int n : lengths) {
            kv.put(key(n), bytes("value of a " + n + "-byte key"));
        }
        for (int i = lengths.length - 1; i >= 0; i--) {
            int n = lengths[i];
            assertArrayEquals(bytes("value of a " + n + "-byte key"), array(kv.get(key(n))), n + "-byte key");
        }
        assertTrue(kv.delete(key(65_535)));
        assertArrayEquals(bytes("value of a 1-byte key"), array(kv.get(key(1))), "a short key after the longest");
    }

    /** A key of {@code n} bytes, different for every length. */
    private static byte[] key(int n) {
        byte[] k = new byte[n];
        for (int i = 0; i < n; i++) {
            k[i] = (byte) ('a' + (i * 7 + n) % 26);
        }
        return k;
    }

    /** The server's event loops: 0 for a thread per data connection. */
    int loops() {
        return 1;
    }

    private KvServer start() throws IOException {
        return start(8 << 20, 1 << 20, 64, Duration.ofSeconds(10));
    }

    private KvClient client(long buffer) throws IOException {
        KvClient c = KvClient.connect(server.controlAddress(), KvClient.Options.defaults().withBuffer(buffer)
                .withName("test"));
        open.add(c);
        return c;
    }

    @AfterEach
    void closeAll() throws Exception {
        for (AutoCloseable c : open) {
            c.close();
        }
        if (server != null) {
            server.close();
        }
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static byte[] array(ByteBuffer b) {
        byte[] a = new byte[b.remaining()];
        b.duplicate().get(a);
        return a;
    }

    @Test
    void putGetDeleteOverTheDataPlane() throws Exception {
        start();
        KvClient kv = client(1 << 20);
        byte[] value = Workloads.value(1, 1, 5000).array();
        long v1 = kv.put(bytes("a"), value);
        assertArrayEquals(value, array(kv.get(bytes("a"))));
        long v2 = kv.put(bytes("a"), bytes("second"));
        assertTrue(v2 > v1, "versions grow");
        assertArrayEquals(bytes("second"), array(kv.get(bytes("a"))));
        kv.put(bytes("empty"), new byte[0]);
        assertEquals(0, kv.get(bytes("empty")).remaining(), "an empty value is a value");
        assertTrue(kv.delete(bytes("a")));
        KvException missing = assertThrows(KvException.class, () -> kv.get(bytes("a")));
        assertEquals(KvException.Code.NOT_FOUND, missing.code());
        assertEquals("no such key 'a'", missing.getMessage());
        assertFalse(kv.delete(bytes("a")), "second delete");
        KvStats s = server.stats();
        assertEquals(1, s.keys());
        assertEquals(0, s.valueBytes());
        assertEquals(4, s.gets());
        assertEquals(3, s.puts());
        assertEquals(2, s.deletes());
        assertEquals(2, s.misses());
        assertEquals(1, s.sessions());
    }

    @Test
    void aPutIsVisibleToEveryClientAndOverwritesFreeTheirBlocks() throws Exception {
        start();
        KvClient writer = client(1 << 20);
        KvClient reader = client(1 << 20);
        writer.put(bytes("k"), Workloads.value(1, 1, 100_000));
        long oneValue = server.stats().usedBytes();
        for (int i = 2; i < 200; i++) {
            writer.put(bytes("k"), Workloads.value(i, 1, 100_000));
            assertEquals(i, Workloads.check(reader.get(bytes("k")), "GET after PUT " + i));
        }
        assertEquals(oneValue, server.stats().usedBytes(), "199 overwrites leave one value's block");
        writer.delete(bytes("k"));
        assertEquals(0, server.stats().usedBytes());
    }

    @Test
    void oneThreadKeepsAnOperationInFlightOnEachOfSeveralClients() throws Exception {
        start();
        KvClient a = client(1 << 16);
        KvClient b = client(1 << 16);
        a.startPut(bytes("a"), ByteBuffer.wrap(bytes("one")));
        b.startPut(bytes("b"), ByteBuffer.wrap(bytes("two")));
        assertThrows(IllegalStateException.class, () -> a.startGet(bytes("a")), "a second operation in flight");
        long vb = b.finishPut();
        long va = a.finishPut();
        assertTrue(va > 0 && vb > 0 && va != vb, "versions " + va + ", " + vb);
        assertThrows(IllegalStateException.class, a::finishGet, "nothing in flight");
        b.startGet(bytes("a"));
        a.startGet(bytes("b"));
        assertArrayEquals(bytes("two"), array(a.finishGet()));
        assertThrows(IllegalStateException.class, b::finishPut, "the GET is in flight, not a PUT");
        assertArrayEquals(bytes("one"), array(b.finishGet()));
        a.startGet(bytes("nope"));
        KvException missing = assertThrows(KvException.class, a::finishGet);
        assertEquals("no such key 'nope'", missing.getMessage());
        assertEquals(2, server.stats().keys());
    }

    @Test
    void typedErrorsOnTheDataPlane() throws Exception {
        start(4 << 20, 1 << 20, 64, Duration.ofSeconds(10));
        KvClient kv = client(2 << 20);
        KvClient small = client(64 * 1024);

        KvException tooLarge = assertThrows(KvException.class, () -> kv.put(bytes("big"), new byte[(1 << 20) + 1]));
        assertEquals(KvException.Code.VALUE_TOO_LARGE, tooLarge.code());

        assertEquals(KvException.Code.BAD_KEY, assertThrows(KvException.class,
                () -> kv.put(new byte[65], bytes("v"))).code(), "key over --max-key");
        assertEquals(KvException.Code.BAD_KEY, assertThrows(KvException.class,
                () -> kv.get(new byte[0])).code(), "empty key");

        kv.put(bytes("100k"), new byte[100_000]);
        KvException bufferTooSmall = assertThrows(KvException.class, () -> small.get(bytes("100k")));
        assertEquals(KvException.Code.BUFFER_TOO_SMALL, bufferTooSmall.code());
        assertTrue(bufferTooSmall.getMessage().contains("100000 bytes"), bufferTooSmall.getMessage());
        assertEquals(KvException.Code.BUFFER_TOO_SMALL, assertThrows(KvException.class,
                () -> small.put(bytes("x"), new byte[100_000])).code(), "a put larger than the buffer");

        int stored = 0;
        KvException full = null;
        while (full == null) {
            try {
                kv.put(bytes("fill-" + stored), new byte[1 << 20]);
                stored++;
            } catch (KvException e) {
                full = e;
            }
        }
        assertEquals(KvException.Code.POOL_FULL, full.code());
        assertEquals(3, stored, "a 4 MiB pool holds three 1 MiB values beside 100 kB");
        assertTrue(kv.delete(bytes("fill-0")));
        kv.put(bytes("fill-again"), new byte[1 << 20]);
        assertArrayEquals(new byte[1 << 20], array(kv.get(bytes("fill-again"))), "freed space is reused");
        assertEquals(3, server.stats().errors(), "refusals the server made are counted (value too large,"
                + " buffer too small, pool full)");
    }

    @Test
    void theControlPlaneHasItsOwnPutGetDeleteAndTypedErrors() throws Exception {
        start(1 << 20, 512 * 1024, 64, Duration.ofSeconds(10));
        KvClient kv = client(1 << 20);
        KvControlClient control = kv.control();
        long version = control.put(bytes("c"), bytes("via grpc"));
        assertArrayEquals(bytes("via grpc"), array(kv.get(bytes("c"))), "data plane sees a control-plane put");
        kv.put(bytes("d"), bytes("via data"));
        assertArrayEquals(bytes("via data"), control.get(bytes("d")), "control plane sees a data-plane put");
        KvControlClient.KeyInfo info = control.stat(bytes("c"));
        assertEquals(8, info.valueBytes());
        assertEquals(version, info.version());
        control.delete(bytes("c"));
        assertEquals(KvException.Code.NOT_FOUND, assertThrows(KvException.class, () -> control.get(bytes("c")))
                .code());
        assertEquals(KvException.Code.NOT_FOUND, assertThrows(KvException.class, () -> control.delete(bytes("c")))
                .code());
        assertEquals(KvException.Code.NOT_FOUND, assertThrows(KvException.class, () -> control.stat(bytes("c")))
                .code());
        assertEquals(KvException.Code.VALUE_TOO_LARGE, assertThrows(KvException.class,
                () -> control.put(bytes("x"), new byte[512 * 1024 + 1])).code());
        assertEquals(KvException.Code.BAD_KEY, assertThrows(KvException.class,
                () -> control.put(new byte[65], bytes("x"))).code());
        control.put(bytes("half"), new byte[512 * 1024]);
        assertEquals(KvException.Code.POOL_FULL, assertThrows(KvException.class,
                () -> control.put(bytes("half2"), new byte[512 * 1024])).code());
        assertEquals(2, control.clear());
        KvStats s = control.stats();
        assertEquals(0, s.keys());
        assertEquals(0, s.usedBytes());
        assertEquals(server.dataEndpoint().toString(), s.dataEndpoint());
    }

    @Test
    void concurrentOverwritesNeverTearAGet() throws Exception {
        start(32 << 20, 1 << 20, 64, Duration.ofSeconds(10));
        Workloads.Counts c = Workloads.concurrentOverwrites(name -> client(256 * 1024), 4, 4, 16, 2000, 16,
                64 * 1024);
        assertEquals(8000, c.gets());
        assertTrue(c.checked() > 1000, "ordering checked on owned keys: " + c.checked());
        assertEquals(0, server.stats().errors());
    }

    /** A raw data connection: the attach and requests by hand, to vanish in the middle of an operation. */
    private Communicator rawSession(ByteBuffer buffer) throws IOException {
        KvControlClient control = KvControlClient.connect(server.controlAddress(), Duration.ofSeconds(10));
        open.add(control);
        OpenSessionReply s = control.openSession("raw");
        Communicator c = Communicators.connect(s.getDataEndpoint());
        c.write(ByteBuffer.allocate(DataWire.ATTACH_BYTES).putInt(DataWire.MAGIC).putShort(DataWire.VERSION)
                .putLong(s.getSessionId()).putLong(s.getToken()).flip());
        c.sync();
        ByteBuffer reply = ByteBuffer.allocate(3);
        c.readFully(reply);
        assertEquals(DataWire.OK, reply.get(0), "attached");
        MemoryRegion region = c.register(buffer, Access.readWrite());
        control.registerBuffer(s.getSessionId(), s.getToken(), region.descriptor().toBytes());
        return c;
    }

    private static ByteBuffer request(byte op, String key, int length) {
        byte[] k = bytes(key);
        return ByteBuffer.allocate(DataWire.REQUEST_BYTES + k.length).put(op).put((byte) 0)
                .putShort((short) k.length).putInt(length).putLong(0).put(k).flip();
    }

    @Test
    void aClientVanishingMidOperationLeaksNoPoolSpace() throws Exception {
        start();
        KvClient kv = client(1 << 20);
        kv.put(bytes("kept"), new byte[300_000]);
        long baseline = server.stats().usedBytes();
        for (byte op : new byte[] {DataWire.PUT, DataWire.GET, DataWire.PUT, DataWire.GET}) {
            Communicator raw = rawSession(ByteBuffer.allocateDirect(1 << 20));
            raw.write(request(op, op == DataWire.PUT ? "lost" : "kept", 300_000));
            raw.sync();
            raw.close(); // before the server's one-sided transfer, or during it
        }
        awaitSessions(1);
        // a PUT whose request arrived whole may complete although its client is gone: then it is stored, not lost
        kv.delete(bytes("lost"));
        assertEquals(baseline, server.stats().usedBytes(), "no block reserved by a vanished PUT stays allocated");
        assertTrue(kv.delete(bytes("kept")), "the remaining client is still served");
        assertEquals(0, server.stats().usedBytes(), "no pin of a vanished GET keeps a block");
    }

    @Test
    void malformedAndForeignRequestsAreRefusedWithoutEndingTheSession() throws Exception {
        start();
        ByteBuffer buffer = ByteBuffer.allocateDirect(4096);
        Communicator raw = rawSession(buffer);
        ByteBuffer reply = ByteBuffer.allocate(DataWire.REPLY_BYTES);
        raw.write(request((byte) 99, "k", 0));
        raw.sync();
        raw.readFully(reply);
        assertEquals(KvException.Code.BAD_REQUEST.wire(), reply.get(0), "unknown op");
        raw.write(ByteBuffer.allocate(DataWire.REQUEST_BYTES + 1).put(DataWire.PUT).put((byte) 0).putShort((short) 1)
                .putInt(100).putLong(4000).put((byte) 'k').flip());
        raw.sync();
        raw.readFully(reply.clear());
        assertEquals(KvException.Code.BAD_REQUEST.wire(), reply.get(0), "a PUT reaching past the buffer");
        raw.write(request(DataWire.GET, "x".repeat(65), 10));
        raw.sync();
        raw.readFully(reply.clear());
        assertEquals(KvException.Code.BAD_KEY.wire(), reply.get(0), "key over --max-key, checked by the server");
        buffer.put(0, bytes("still fine"));
        raw.write(request(DataWire.PUT, "k", 10));
        raw.sync();
        raw.readFully(reply.clear());
        assertEquals(DataWire.OK, reply.get(0));
        assertArrayEquals(bytes("still fine"), client(4096).control().get(bytes("k")));
        raw.close();
    }

    @Test
    void inlineValuesFollowTheirMessagesAndARefusedPutsValueIsSkipped() throws Exception {
        transfer = ValueTransfer.INLINE;
        start(1 << 20, 64 << 10, 64, Duration.ofSeconds(10));
        Communicator raw = rawSession(ByteBuffer.allocateDirect(4096));
        ByteBuffer reply = ByteBuffer.allocate(DataWire.REPLY_BYTES);
        raw.write(request(DataWire.PUT, "k", 10));
        raw.write(ByteBuffer.wrap(bytes("inline!!!!")));
        raw.sync();
        raw.readFully(reply);
        assertEquals(DataWire.OK, reply.get(0));
        for (String refused : List.of("x".repeat(65), "k")) { // a key over --max-key; a PUT past the 4k buffer
            raw.write(request(DataWire.PUT, refused, refused.length() > 1 ? 3000 : 5000));
            raw.write(ByteBuffer.allocate(refused.length() > 1 ? 3000 : 5000));
            raw.sync();
            raw.readFully(reply.clear());
            assertTrue(reply.get(0) != DataWire.OK, "refused " + reply.get(0));
        }
        raw.write(request(DataWire.GET, "k", 4096));
        raw.sync();
        raw.readFully(reply.clear());
        assertEquals(DataWire.OK, reply.get(0), "the next request is read from its start");
        ByteBuffer value = ByteBuffer.allocate(reply.getInt(4));
        raw.readFully(value);
        assertArrayEquals(bytes("inline!!!!"), value.array(), "the value follows the reply");
        raw.close();

        KvClient kv = client(128 << 10);
        assertArrayEquals(bytes("inline!!!!"), array(kv.get(bytes("k"))));
        assertEquals(KvException.Code.VALUE_TOO_LARGE, assertThrows(KvException.class,
                () -> kv.put(bytes("big"), new byte[(64 << 10) + 1])).code());
        KvClient small = client(4096);
        assertEquals(KvException.Code.NOT_FOUND, assertThrows(KvException.class,
                () -> small.get(bytes("k2"))).code());
        kv.put(bytes("k2"), new byte[5000]);
        assertEquals(KvException.Code.BUFFER_TOO_SMALL, assertThrows(KvException.class,
                () -> small.get(bytes("k2"))).code());
        assertArrayEquals(bytes("inline!!!!"), array(small.get(bytes("k"))), "no value bytes followed the refusal");
        assertEquals(5000, kv.get(bytes("k2")).remaining());
        assertEquals(2, server.stats().keys());
    }

    @Test
    void sessionsAreLimitedAuthenticatedAndExpire() throws Exception {
        start(1 << 20, 1024, 2, Duration.ofMillis(300));
        client(4096);
        client(4096);
        KvException busy = assertThrows(KvException.class, () -> client(4096));
        assertEquals(KvException.Code.BUSY, busy.code());
        open.forEach(c -> {
            try {
                c.close();
            } catch (Exception e) {
                throw new AssertionError(e);
            }
        });
        open.clear();
        awaitSessions(0);

        KvControlClient control = KvControlClient.connect(server.controlAddress(), Duration.ofSeconds(10));
        open.add(control);
        OpenSessionReply s = control.openSession("wrong token");
        try (Communicator c = Communicators.connect(s.getDataEndpoint())) {
            c.write(ByteBuffer.allocate(DataWire.ATTACH_BYTES).putInt(DataWire.MAGIC).putShort(DataWire.VERSION)
                    .putLong(s.getSessionId()).putLong(s.getToken() + 1).flip());
            c.sync();
            ByteBuffer head = ByteBuffer.allocate(3);
            c.readFully(head);
            assertEquals(KvException.Code.NO_SESSION.wire(), head.get(0));
        }
        awaitSessions(0); // never attached: it expires after the attach timeout
        assertEquals(KvException.Code.NO_SESSION, assertThrows(KvException.class,
                () -> control.registerBuffer(s.getSessionId(), s.getToken(), new byte[0])).code());
    }

    @Test
    void requestsArrivingInPiecesAreServedWhole() throws Exception {
        transfer = ValueTransfer.INLINE;
        start();
        Communicator raw = rawSession(ByteBuffer.allocateDirect(4096));
        ByteBuffer reply = ByteBuffer.allocate(DataWire.REPLY_BYTES);
        byte[] value = bytes("in pieces, byte by byte");
        ByteBuffer put = ByteBuffer.allocate(DataWire.REQUEST_BYTES + 3 + value.length);
        put.put(request(DataWire.PUT, "abc", value.length)).put(value).flip();
        // every byte on its own, synced: the server sees a header, a key and a value each in several arrivals
        for (int i = 0; i < put.limit(); i++) {
            raw.write(put.duplicate().position(i).limit(i + 1));
            raw.sync();
        }
        raw.readFully(reply);
        assertEquals(DataWire.OK, reply.get(0));
        // two whole requests in one write: both answered, in order
        ByteBuffer two = ByteBuffer.allocate(2 * (DataWire.REQUEST_BYTES + 3));
        two.put(request(DataWire.GET, "abc", 4096)).put(request(DataWire.GET, "abc", 4096)).flip();
        raw.write(two);
        raw.sync();
        for (int i = 0; i < 2; i++) {
            raw.readFully(reply.clear());
            assertEquals(DataWire.OK, reply.get(0), "GET " + i);
            ByteBuffer got = ByteBuffer.allocate(reply.getInt(4));
            raw.readFully(got);
            assertArrayEquals(value, got.array(), "GET " + i);
        }
        raw.close();
    }

    @Test
    void manySessionsAreServedTogether() throws Exception {
        start(16 << 20, 1 << 20, 64, Duration.ofSeconds(10));
        int clients = 32;
        List<KvClient> kvs = new ArrayList<>();
        for (int i = 0; i < clients; i++) {
            kvs.add(client(64 << 10));
        }
        // every client has an operation in flight at once, 50 rounds, each value its own
        for (int round = 0; round < 50; round++) {
            for (int i = 0; i < clients; i++) {
                kvs.get(i).startPut(bytes("key-" + i), ByteBuffer.wrap(bytes("value " + i + " " + round)));
            }
            for (KvClient kv : kvs) {
                kv.finishPut();
            }
            for (int i = 0; i < clients; i++) {
                kvs.get(i).startGet(bytes("key-" + (clients - 1 - i)));
            }
            for (int i = 0; i < clients; i++) {
                assertArrayEquals(bytes("value " + (clients - 1 - i) + " " + round), array(kvs.get(i).finishGet()));
            }
        }
        if (loops() > 0) {
            assertEquals(0, Thread.getAllStackTraces().keySet().stream()
                    .filter(t -> t.getName().startsWith("kv-session-")).count(),
                    "no thread per connection once they attached: the loop serves them");
        }
    }

    @Test
    void aClientReadingNoRepliesHoldsUpOthersAtMostTheWriteBound() throws Exception {
        dataOptions = "?readTimeout=1s";
        transfer = ValueTransfer.INLINE; // values follow their replies: requests for a few MiB fill the connection
        start();
        KvClient kv = client(64 << 10);
        kv.put(bytes("v"), new byte[32 << 10]);
        Communicator raw = rawSession(ByteBuffer.allocateDirect(64 << 10));
        for (int i = 0; i < 200; i++) {
            raw.write(request(DataWire.GET, "v", 64 << 10)); // 200 replies of 32 KiB that it never reads
        }
        raw.sync();
        long start = System.nanoTime();
        for (int i = 0; i < 20; i++) {
            assertEquals(32 << 10, kv.get(bytes("v")).remaining(), "the other client is served");
        }
        assertTrue(System.nanoTime() - start < Duration.ofSeconds(8).toNanos(), "held up "
                + Duration.ofNanos(System.nanoTime() - start));
        awaitSessions(1); // the silent reader's session failed once a reply's write waited readTimeout
        assertEquals(1, server.stats().sessionsFailed());
        raw.close();
    }

    @Test
    void closingTheServerFailsClientsInsteadOfHangingThem() throws Exception {
        start();
        KvClient kv = client(4096);
        kv.put(bytes("k"), bytes("v"));
        server.close();
        assertThrows(IOException.class, () -> kv.get(bytes("k")));
    }

    /** Waits for the server's session count, which follows data connections closing on their own threads. */
    private void awaitSessions(int expected) throws InterruptedException {
        assertTrue(server.awaitSessions(expected, Duration.ofSeconds(20)), "open sessions: "
                + server.stats().sessions() + ", expected " + expected);
    }
}
