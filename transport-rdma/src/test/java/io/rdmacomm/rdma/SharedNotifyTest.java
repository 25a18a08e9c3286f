package io.rdmacomm.rdma;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The shared ring's control words: the published end, and the small chunk copied into the end's line, which a
 * reader takes only whole and only if the writer did not change it meanwhile.
 */
@Timeout(60)
class SharedNotifyTest {
    private static byte pattern(long at) {
        return (byte) (at * 31 + (at >>> 8));
    }

    /** A buffer holding the chunk {@code [from, from + n)} of the pattern from offset 0. */
    private static ByteBuffer chunk(long from, int n) {
        ByteBuffer b = ByteBuffer.allocate(Math.max(n, 1));
        for (int i = 0; i < n; i++) {
            b.put(i, pattern(from + i));
        }
        return b;
    }

    private static byte[] expected(long from, int n) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = pattern(from + i);
        }
        return b;
    }

    @Test
    void aSmallChunkCanBeTakenFromTheEndsLineOnlyWithItsOwnBounds() {
        SharedNotify w = new SharedNotify(ByteBuffer.allocateDirect(SharedNotify.LENGTH));
        assertFalse(w.publish(100, chunk(90, 10), 0, 10), "nobody polls");
        assertEquals(100, w.ringEnd());
        byte[] into = new byte[SharedNotify.INLINE_MAX];
        assertTrue(w.takeInline(90, 100, into));
        assertArrayEquals(expected(90, 10), Arrays.copyOf(into, 10));
        assertFalse(w.takeInline(91, 100, into), "part of the chunk");
        assertFalse(w.takeInline(80, 100, into), "more than the chunk");
        assertFalse(w.takeInline(90, 99, into), "another end");
    }

    @Test
    void aLargeChunkIsOnlyInTheRing() {
        SharedNotify w = new SharedNotify(ByteBuffer.allocateDirect(SharedNotify.LENGTH));
        w.publish(10, chunk(0, 10), 0, 10);
        int big = SharedNotify.INLINE_MAX + 1;
        w.publish(10 + big, chunk(10, big), 0, big);
        byte[] into = new byte[SharedNotify.INLINE_MAX];
        assertFalse(w.takeInline(10, 10 + big, into));
        assertFalse(w.takeInline(0, 10 + big, into), "the earlier chunk's bytes are not these");
    }

    /**
     * A writer publishing chunks of 1 to INLINE_MAX bytes while a reader takes them, up to two chunks behind (as
     * credit allows): every chunk the reader accepts from the line holds exactly the bytes written, however the
     * writer's next chunk overlapped the copy.
     */
    @Test
    void aReaderNeverAcceptsBytesTheWriterWasChanging() throws Exception {
        SharedNotify control = new SharedNotify(ByteBuffer.allocateDirect(SharedNotify.LENGTH));
        int chunks = 300_000;
        AtomicLong taken = new AtomicLong(); // the reader's end, as its credit
        long[] ends = new long[chunks];
        long end = 0;
        for (int i = 0; i < chunks; i++) {
            end += 1 + i % SharedNotify.INLINE_MAX;
            ends[i] = end;
        }
        CompletableFuture<Void> writer = CompletableFuture.runAsync(() -> {
            long from = 0;
            for (int i = 0; i < chunks; i++) {
                while (i >= 2 && taken.get() < ends[i - 2]) {
                    Thread.onSpinWait();
                }
                int n = (int) (ends[i] - from);
                control.publish(ends[i], chunk(from, n), 0, n);
                from = ends[i];
            }
        });
        byte[] into = new byte[SharedNotify.INLINE_MAX];
        long inline = 0;
        long seen = 0;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(50);
        while (seen < end) {
            long e = control.ringEnd();
            if (e == seen) {
                assertTrue(System.nanoTime() - deadline < 0, "the writer stopped at " + seen);
                Thread.onSpinWait();
                continue;
            }
            if (control.takeInline(seen, e, into)) {
                inline++;
                int n = (int) (e - seen);
                assertArrayEquals(expected(seen, n), Arrays.copyOf(into, n), "chunk at " + seen);
            }
            seen = e;
            taken.set(seen);
        }
        writer.get(10, TimeUnit.SECONDS);
        assertTrue(inline > 0, "no chunk was taken from the line");
    }
}
