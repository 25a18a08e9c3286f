package io.rdmacomm.rdma;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(10)
class SegmentsTest {

    @Test
    void keepsStreamOrderWhateverTheArrivalOrderAcrossGrowthAndWrapAround() {
        Segments s = new Segments();
        Random r = new Random(7);
        long next = 0;
        long expected = 0;
        for (int round = 0; round < 200; round++) {
            // a batch of consecutive segments, delivered shuffled
            List<long[]> batch = new ArrayList<>();
            int count = 1 + r.nextInt(40);
            for (int i = 0; i < count; i++) {
                int len = 1 + r.nextInt(100);
                batch.add(new long[] {next, next * 3, len});
                next += len;
            }
            Collections.shuffle(batch, r);
            for (long[] b : batch) {
                s.add(b[0], b[1], (int) b[2]);
            }
            // consume all but a few, in pieces
            while (s.size() > r.nextInt(3)) {
                assertEquals(expected, s.firstPos());
                int n = 1 + r.nextInt(s.firstLength());
                expected += n;
                s.consume(n);
            }
        }
        while (!s.isEmpty()) {
            assertEquals(expected, s.firstPos());
            expected += s.firstLength();
            s.consume(s.firstLength());
        }
        assertEquals(next, expected);
    }

    @Test
    void consumingMovesPositionAndCursorTogether() {
        Segments s = new Segments();
        s.add(100, 5000, 10);
        s.consume(4);
        assertEquals(104, s.firstPos());
        assertEquals(5004, s.firstCursor());
        assertEquals(6, s.firstLength());
        s.consume(6);
        assertTrue(s.isEmpty());
    }

    @Test
    void consumingMoreThanTheFirstSegmentIsRefused() {
        Segments s = new Segments();
        s.add(0, 0, 3);
        assertThrows(IllegalArgumentException.class, () -> s.consume(4));
        assertThrows(IllegalArgumentException.class, () -> new Segments().consume(1));
    }
}
