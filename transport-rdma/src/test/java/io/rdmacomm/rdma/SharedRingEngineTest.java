package io.rdmacomm.rdma;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The engine where the provider maps the peer's ring (as ucx-ffm does on shared memory), against the in-memory
 * provider: writes are copies into the peer's ring, and a reader that busy-polls takes them from the published
 * ring end, so the writer sends no DATA; a reader that parks gets DATA. Nothing may be lost or doubled whichever
 * way each chunk is notified.
 */
@Timeout(60)
class SharedRingEngineTest {
    private final InMemoryProvider provider = new InMemoryProvider();
    private InMemoryProvider.Connected pair;
    private RdmaCommunicator client;
    private RdmaCommunicator accepted;

    private void open(String options) throws IOException {
        provider.mapRings = true;
        pair = provider.connect(options);
        client = pair.client();
        accepted = pair.accepted();
    }

    @AfterEach
    void closeAll() {
        if (pair != null) {
            pair.close();
        }
    }

    private InMemoryProvider.Chan channel(String side) {
        return provider.channels.values().stream().filter(c -> c.name.startsWith(side)).findFirst().orElseThrow();
    }

    /**
     * busyPoll 0 parks at once (DATA only), 20us flips between polling and parking, 10ms polls throughout; with
     * zero-copy adverts the reader does not poll the ring end (stream positions and ring cursors part), so DATA and
     * ZDATA carry everything.
     */
    @ParameterizedTest
    @ValueSource(strings = {"0", "20us", "10ms", "10ms&zeroCopyThreshold=16k"})
    void aStreamOfMixedSizesArrivesWholeWhetherTheReaderPollsOrParks(String busyPoll) throws Exception {
        open("?ringSize=64k&readTimeout=20s&busyPoll=" + busyPoll);
        assertTrue(client.statistics().peerRingMapped());
        assertTrue(accepted.statistics().peerRingMapped());
        byte[] data = new byte[3_000_000];
        new Random(7).nextBytes(data);
        CompletableFuture<byte[]> received = CompletableFuture.supplyAsync(() -> {
            ByteBuffer all = ByteBuffer.allocate(data.length);
            Random r = new Random(8);
            try {
                while (all.hasRemaining()) {
                    int n = Math.min(all.remaining(), 1 + r.nextInt(r.nextBoolean() ? 100 : 90_000));
                    ByteBuffer dst = r.nextBoolean() ? ByteBuffer.allocateDirect(n) : ByteBuffer.allocate(n);
                    int got = accepted.read(dst);
                    assertTrue(got > 0, "read returned " + got);
                    all.put(dst.flip());
                }
            } catch (IOException e) {
                throw new RuntimeException(e);
            }
            return all.array();
        });
        Random r = new Random(9);
        for (int off = 0; off < data.length; ) {
            int n = Math.min(data.length - off, 1 + r.nextInt(r.nextBoolean() ? 50 : 150_000));
            ByteBuffer src = r.nextBoolean() ? ByteBuffer.allocateDirect(n) : ByteBuffer.allocate(n);
            src.put(data, off, n).flip();
            client.write(src);
            if (r.nextInt(4) == 0) {
                client.sync();
            }
            off += n;
        }
        client.sync();
        assertArrayEquals(data, received.get(30, TimeUnit.SECONDS));
    }

    /**
     * Small chunks a polling reader takes from the published end's line, read a few bytes at a time (from the middle
     * of a chunk too) and whole, each acknowledged before the next is written so that it is published alone.
     */
    @Test
    void smallChunksReadInPiecesFromTheEndsLineComeBackWhole() throws Exception {
        int chunks = 2000;
        open("?ringSize=64k&readTimeout=20s&busyPoll=10ms");
        CompletableFuture<Void> reader = CompletableFuture.runAsync(() -> {
            try {
                for (int i = 0; i < chunks; i++) {
                    int n = 1 + i % SharedNotify.INLINE_MAX;
                    ByteBuffer got = ByteBuffer.allocate(n);
                    int piece = 1 + i % 7;
                    while (got.hasRemaining()) {
                        ByteBuffer part = ByteBuffer.allocate(Math.min(piece, got.remaining()));
                        accepted.readFully(part);
                        got.put(part.flip());
                    }
                    for (int k = 0; k < n; k++) {
                        assertEquals((byte) (i * 7 + k), got.get(k), "chunk " + i + ", byte " + k);
                    }
                    accepted.write(ByteBuffer.allocate(1));
                    accepted.sync();
                }
            } catch (IOException e) {
                throw new RuntimeException(e);
            }
        });
        ByteBuffer ack = ByteBuffer.allocate(1);
        for (int i = 0; i < chunks; i++) {
            int n = 1 + i % SharedNotify.INLINE_MAX;
            ByteBuffer src = ByteBuffer.allocate(n);
            for (int k = 0; k < n; k++) {
                src.put(k, (byte) (i * 7 + k));
            }
            client.write(src);
            client.sync();
            client.readFully(ack.clear());
        }
        reader.get(30, TimeUnit.SECONDS);
    }

    @Test
    void aPollingReaderIsNotifiedThroughTheRingAndAParkedOneByData() throws Exception {
        int roundTrips = 1000;
        open("?ringSize=64k&readTimeout=20s&busyPoll=10ms");
        CompletableFuture<Void> echo = CompletableFuture.runAsync(() -> {
            ByteBuffer b = ByteBuffer.allocateDirect(8);
            try {
                for (int i = 0; i < roundTrips; i++) {
                    accepted.readFully(b.clear());
                    accepted.write(b.flip());
                    accepted.sync();
                }
            } catch (IOException e) {
                throw new RuntimeException(e);
            }
        });
        InMemoryProvider.Chan ch = channel("client");
        int sendsBefore = ch.sends.get();
        ByteBuffer b = ByteBuffer.allocateDirect(8);
        for (long i = 0; i < roundTrips; i++) {
            client.write(b.clear().putLong(0, i));
            client.sync();
            client.readFully(b.clear());
            assertEquals(i, b.getLong(0));
        }
        echo.get(30, TimeUnit.SECONDS);
        int sends = ch.sends.get() - sendsBefore;
        // the echo's reader polls whenever a request comes: most requests need no message at all
        assertTrue(sends < roundTrips / 2, sends + " messages for " + roundTrips + " requests");
    }

    @Test
    void aParkingReaderGetsDataForEveryWrite() throws Exception {
        open("?ringSize=64k&readTimeout=20s&busyPoll=0");
        InMemoryProvider.Chan ch = channel("client");
        int sendsBefore = ch.sends.get();
        ByteBuffer b = ByteBuffer.allocateDirect(8);
        for (long i = 0; i < 100; i++) {
            client.write(b.clear().putLong(0, i));
            client.sync();
            accepted.readFully(b.clear());
            assertEquals(i, b.getLong(0));
        }
        assertTrue(ch.sends.get() - sendsBefore >= 100, "a reader that never polls needs DATA for every write");
    }

    /**
     * A writer that found the flag down sends DATA; if a polling read takes the bytes from the published end before
     * that DATA comes, the DATA must not deliver them a second time, and the stream goes on in order.
     */
    @Test
    void dataThatComesAfterItsBytesWereTakenFromTheRingEndDoublesNothing() throws Exception {
        open("?ringSize=64k&readTimeout=20s&busyPoll=10ms");
        InMemoryProvider.Chan ch = channel("client");
        int sendsBefore = ch.sends.get();
        ch.hang(); // the client's messages wait on its delivery thread
        CompletableFuture<Void> first = CompletableFuture.runAsync(() -> {
            try {
                client.write(ByteBuffer.allocate(8).putLong(0, 1));
                client.sync(); // until the DATA's completion, after resume()
            } catch (IOException e) {
                throw new RuntimeException(e);
            }
        });
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (ch.sends.get() == sendsBefore) { // no reader polls yet: the write sends DATA, which waits
            assertTrue(System.nanoTime() < deadline, "the first write sent no DATA");
            Thread.onSpinWait();
        }
        ByteBuffer b = ByteBuffer.allocate(8);
        accepted.readFully(b); // polls: from the published end, before its DATA
        assertEquals(1, b.getLong(0));
        ch.resume();
        first.get(20, TimeUnit.SECONDS);
        for (long i = 2; i < 50; i++) {
            client.write(ByteBuffer.allocate(8).putLong(0, i));
            client.sync();
            accepted.readFully(b.clear());
            assertEquals(i, b.getLong(0), "the stream after a late DATA");
        }
        assertEquals(0, accepted.available(), "bytes delivered twice");
    }

    /** The control words are the writer's to scribble on: an end beyond the reader's credit fails the connection. */
    @Test
    void aPublishedEndBeyondTheCreditFailsTheConnectionNamingIt() throws Exception {
        open("?ringSize=64k&readTimeout=20s&busyPoll=10ms");
        for (ByteBuffer control : provider.controls.values()) {
            control.order(ByteOrder.nativeOrder()).putLong(0, 1L << 40);
        }
        IOException e = assertThrows(IOException.class, () -> accepted.read(ByteBuffer.allocate(8)));
        assertTrue(e.getMessage().contains("shared ring") && e.getMessage().contains("corrupt"), e.getMessage());
    }
}
