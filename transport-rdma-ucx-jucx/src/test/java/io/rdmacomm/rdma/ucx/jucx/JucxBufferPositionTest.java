package io.rdmacomm.rdma.ucx.jucx;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.rdmacomm.api.Access;
import io.rdmacomm.api.Communicators;
import io.rdmacomm.api.MemoryRegion;
import io.rdmacomm.rdma.RdmaCommunicator;
import java.nio.ByteBuffer;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Direct buffers whose position is not 0 when UCX first registers them (zero-copy sources and targets, put and
 * get buffers) over the real UCX provider: the region must start at index 0, not at the position, or the bytes
 * come from (or land at) the wrong place.
 */
@Timeout(60)
class JucxBufferPositionTest {
    private static final int CAPACITY = 64 * 1024;
    /** Position and distance from the end: a region wrongly based at the position still stays in the buffer. */
    private static final int MARGIN = 1000;

    private RdmaCommunicator server;
    private RdmaCommunicator client;
    private RdmaCommunicator accepted;

    private void open() throws Exception {
        server = (RdmaCommunicator) Communicators.serve("rdma://127.0.0.1:0?provider=ucx&zeroCopyThreshold=4k");
        client = (RdmaCommunicator) Communicators.connect(server.endpoint().toString());
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

    private static ByteBuffer positioned(byte[] content) {
        ByteBuffer b = ByteBuffer.allocateDirect(CAPACITY);
        if (content != null) {
            b.put(content);
        }
        return b.limit(CAPACITY - MARGIN).position(MARGIN);
    }

    private static byte[] pattern(long seed) {
        byte[] b = new byte[CAPACITY];
        new Random(seed).nextBytes(b);
        return b;
    }

    private static byte[] bytes(ByteBuffer b, int from, int length) {
        byte[] out = new byte[length];
        b.duplicate().clear().position(from).get(out);
        return out;
    }

    @Test
    void putFromAndGetIntoBuffersFirstUsedAtANonZeroPosition() throws Exception {
        open();
        ByteBuffer target = ByteBuffer.allocateDirect(CAPACITY);
        MemoryRegion region = accepted.register(target, Access.readWrite());
        byte[] data = pattern(1);
        int n = CAPACITY - 2 * MARGIN;

        client.put(positioned(data), region.descriptor(), 0);
        assertArrayEquals(bytes(ByteBuffer.wrap(data), MARGIN, n), bytes(target, 0, n),
                "bytes a put took from a source at position " + MARGIN);

        ByteBuffer back = positioned(null);
        client.get(region.descriptor(), 0, back);
        assertArrayEquals(bytes(target, 0, n), bytes(back, MARGIN, n),
                "bytes a get placed into a destination at position " + MARGIN);
        region.close();
    }

    @Test
    void zeroCopyWritesWithBuffersFirstUsedAtANonZeroPosition() throws Exception {
        open();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        // the writer takes the zero-copy path only if the reader's advert arrived first: rounds until one did
        for (int round = 0; client.statistics().zeroCopyBytesWritten() == 0; round++) {
            if (System.nanoTime() - deadline > 0) {
                fail("no write took the zero-copy path in " + round + " rounds");
            }
            byte[] data = pattern(100 + round);
            int n = CAPACITY - 2 * MARGIN;
            ByteBuffer dst = positioned(null);
            CompletableFuture<Integer> read = new CompletableFuture<>();
            Thread reader = new Thread(() -> {
                try {
                    read.complete(accepted.read(dst));
                } catch (Throwable t) {
                    read.completeExceptionally(t);
                }
            }, "test-reader");
            reader.start();
            // parked in read: it found nothing to read and advertised dst
            while (reader.getState() != Thread.State.TIMED_WAITING && !read.isDone()) {
                if (System.nanoTime() - deadline > 0) {
                    fail("the reader did not block; state " + reader.getState());
                }
                Thread.onSpinWait();
            }
            client.write(positioned(data));
            client.sync();
            int got = read.get(10, TimeUnit.SECONDS);
            reader.join(TimeUnit.SECONDS.toMillis(10));
            assertTrue(got > 0 && got <= n, "read returned " + got);
            assertArrayEquals(bytes(ByteBuffer.wrap(data), MARGIN, got), bytes(dst, MARGIN, got),
                    "bytes read in round " + round + " into a buffer at position " + MARGIN
                            + " (zero-copy bytes so far: " + client.statistics().zeroCopyBytesWritten() + ")");
            if (got < n) {
                ByteBuffer rest = ByteBuffer.allocate(n - got);
                accepted.readFully(rest);
                assertArrayEquals(bytes(ByteBuffer.wrap(data), MARGIN + got, n - got), rest.array(),
                        "rest of round " + round);
            }
        }
    }
}
