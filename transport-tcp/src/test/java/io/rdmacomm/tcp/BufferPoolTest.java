package io.rdmacomm.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The process-wide pool of full-size buffers: reuse, cleared buffers, and a bound on what it keeps idle. */
class BufferPoolTest {

    @Test
    @Timeout(10)
    void aBufferGivenBackIsTakenAgainClearedAndPoolsOfOneCapacityAreShared() {
        BufferPool pool = BufferPool.of(12_345);
        assertSame(pool, BufferPool.of(12_345));
        ByteBuffer b = pool.take();
        assertTrue(b.isDirect());
        assertEquals(12_345, b.capacity());
        b.position(100).limit(200);
        pool.give(b);
        ByteBuffer again = pool.take();
        assertSame(b, again);
        assertEquals(0, again.position());
        assertEquals(12_345, again.limit());
        assertNotSame(again, pool.take(), "an empty pool allocates");
    }

    @Test
    @Timeout(10)
    void itKeepsAtMostAFewMiBIdle() {
        int capacity = 1024 * 1024 + 5;
        BufferPool pool = BufferPool.of(capacity);
        List<ByteBuffer> taken = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            taken.add(pool.take());
        }
        taken.forEach(pool::give);
        assertTrue(pool.idleCount() * (long) capacity <= 4L << 20, pool.idleCount() + " idle buffers of 1 MiB");
        assertTrue(pool.idleCount() >= 2, "it keeps some");
    }
}
