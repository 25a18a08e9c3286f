package io.rdmacomm.rdma;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * tryWrite on the engine, against the in-memory provider, with the peer's ring mapped (shared memory) and staged
 * (placed by the provider): it takes what fits in the peer's ring and no more while the peer reads nothing, returns
 * 0 once the ring is full without waiting, takes more once the peer read, and what it took arrives in order with
 * what write() sent after it.
 */
@Timeout(60)
class TryWriteTest {
    private static final int RING = 64 * 1024;
    private final InMemoryProvider provider = new InMemoryProvider();
    private InMemoryProvider.Connected pair;

    @AfterEach
    void closeAll() {
        if (pair != null) {
            pair.close();
        }
    }

    @ParameterizedTest
    @ValueSource(booleans = {true, false})
    void takesWhatFitsInThePeersRingAndNeverWaits(boolean mapped) throws Exception {
        provider.mapRings = mapped;
        pair = provider.connect("?ringSize=64k&readTimeout=20s");
        RdmaCommunicator client = pair.client();
        RdmaCommunicator accepted = pair.accepted();
        byte[] data = new byte[4 * RING];
        new Random(3).nextBytes(data);
        ByteBuffer src = ByteBuffer.wrap(data, 0, 3 * RING);
        long start = System.nanoTime();
        int taken = 0;
        for (int n; (n = client.tryWrite(src)) > 0;) {
            taken += n;
        }
        assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(10), "tryWrite waited");
        assertEquals(RING, taken, "a peer that reads nothing has room for one ring");
        assertEquals(RING, src.position(), "what was not taken stays in the buffer");
        assertEquals(0, client.tryWrite(src), "a full ring takes nothing");

        CompletableFuture<byte[]> received = readAll(accepted, data.length);
        // the reader frees the ring: tryWrite takes the rest of the three rings, write() the fourth
        while (src.hasRemaining()) {
            if (client.tryWrite(src) == 0) {
                Thread.onSpinWait();
            }
        }
        client.write(ByteBuffer.wrap(data, 3 * RING, RING));
        client.sync();
        assertArrayEquals(data, received.get(30, TimeUnit.SECONDS));
    }

    @ParameterizedTest
    @ValueSource(booleans = {true, false})
    void aGatheringTryWriteTakesBuffersInOrderUntilTheRingIsFull(boolean mapped) throws Exception {
        provider.mapRings = mapped;
        pair = provider.connect("?ringSize=64k&readTimeout=20s");
        RdmaCommunicator client = pair.client();
        RdmaCommunicator accepted = pair.accepted();
        byte[] data = new byte[3 * 40 * 1024];
        new Random(4).nextBytes(data);
        ByteBuffer[] srcs = {ByteBuffer.wrap(data, 0, 40 * 1024).slice(),
            ByteBuffer.wrap(data, 40 * 1024, 40 * 1024).slice(), ByteBuffer.wrap(data, 80 * 1024, 40 * 1024).slice()};
        assertEquals(RING, client.tryWrite(srcs, 0, 3), "one ring's worth of the three buffers");
        assertEquals(0, srcs[0].remaining());
        assertEquals(3 * 40 * 1024 - RING - 40 * 1024, srcs[1].remaining(), "the second taken in part");
        assertEquals(40 * 1024, srcs[2].remaining(), "the third untouched");
        assertEquals(0, client.tryWrite(srcs, 1, 2), "a full ring takes nothing");
        CompletableFuture<byte[]> received = readAll(accepted, data.length);
        client.write(srcs[1]);
        client.write(srcs[2]);
        client.sync();
        assertArrayEquals(data, received.get(30, TimeUnit.SECONDS));
    }

    private static CompletableFuture<byte[]> readAll(RdmaCommunicator c, int length) {
        return CompletableFuture.supplyAsync(() -> {
            ByteBuffer all = ByteBuffer.allocate(length);
            try {
                while (all.hasRemaining()) {
                    c.read(all);
                }
            } catch (IOException e) {
                throw new RuntimeException(e);
            }
            return all.array();
        });
    }

    @ParameterizedTest
    @ValueSource(booleans = {true, false})
    void aClosedCommunicatorRefusesTryWrite(boolean mapped) throws Exception {
        provider.mapRings = mapped;
        pair = provider.connect("?ringSize=64k");
        RdmaCommunicator client = pair.client();
        client.close();
        assertThrows(ClosedChannelException.class, () -> client.tryWrite(ByteBuffer.allocate(8)));
    }
}
