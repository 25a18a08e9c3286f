package io.rdmacomm.clientcomm.bench;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RunsTest {
    /** Keeps allocations reachable so the JIT cannot remove them. */
    static volatile Object sink;

    @Test
    void warmupRoundTripsAreRunButNotRecorded() throws IOException {
        long[] calls = {0};
        Histogram h = Runs.newHistogram();
        Runs.latency(() -> calls[0]++, 1000, 5000, h, Progress.silent(), AllocationMeter.create());
        assertEquals(6000, calls[0]);
        assertEquals(5000, h.getTotalCount());
    }

    @Test
    void allocationInsideTheRoundTripIsCountedPerRoundTrip() throws IOException {
        RoundTrip allocating = () -> sink = new byte[1024];
        long bytes = Runs.latency(allocating, 20_000, 10_000, Runs.newHistogram(), Progress.silent(),
                AllocationMeter.create());
        double perRoundTrip = bytes / 10_000.0;
        assertTrue(perRoundTrip >= 1024 && perRoundTrip < 1200, "per round trip: " + perRoundTrip);
    }

    @Test
    void theLoopItselfAllocatesNothingInSteadyState() throws IOException {
        long[] calls = {0};
        RoundTrip quiet = () -> calls[0]++;
        AllocationMeter meter = AllocationMeter.create();
        Histogram h = Runs.newHistogram();
        // the first runs may include the JIT's own transitions, later ones must not
        for (int i = 0; i < 3; i++) {
            Runs.latency(quiet, 50_000, 200_000, h, Progress.silent(), meter);
        }
        long bytes = Runs.latency(quiet, 50_000, 200_000, h, Progress.silent(), meter);
        assertTrue(bytes / 200_000.0 < 0.01, "allocated " + bytes + " bytes in 200000 round trips");
    }

    @Test
    void progressSeesTheFinalCount() throws IOException {
        try (Progress p = Progress.silent()) {
            Runs.latency(() -> { }, 10, 3000, Runs.newHistogram(), p, AllocationMeter.create());
            assertEquals(3010, p.done());
        }
    }

    /** Records the size of every write and acknowledges what it was given. */
    private static final class RecordingSender implements BulkSender {
        final List<Integer> writes = new ArrayList<>();
        long written;

        @Override
        public void write(ByteBuffer src) {
            writes.add(src.remaining());
            written += src.remaining();
            src.position(src.limit());
        }

        @Override
        public long awaitAck() {
            return written;
        }
    }

    @Test
    void bandwidthWritesTheTotalInSizedChunksThenWaitsForTheAck() throws IOException {
        RecordingSender sender = new RecordingSender();
        long nanos = Runs.bandwidth(sender, ByteBuffer.allocateDirect(4096), 10_000, Progress.silent());
        assertTrue(nanos > 0);
        assertArrayEquals(new Object[] {4096, 4096, 1808}, sender.writes.toArray());
    }

    @Test
    void aWarmupIsStreamedFirstInItsOwnChunksAndAcknowledgedWithTheTotal() throws IOException {
        RecordingSender sender = new RecordingSender();
        // the warm-up's last chunk is cut at its end, so the timed part starts on a write of its own
        long nanos = Runs.bandwidth(sender, ByteBuffer.allocateDirect(4096), 5000, 10_000, Progress.silent());
        assertTrue(nanos > 0);
        assertArrayEquals(new Object[] {4096, 904, 4096, 4096, 1808}, sender.writes.toArray());
        assertEquals(15_000, sender.written);
    }

    @Test
    void aWrongAcknowledgementFailsTheRun() {
        BulkSender lying = new BulkSender() {
            @Override
            public void write(ByteBuffer src) {
                src.position(src.limit());
            }

            @Override
            public long awaitAck() {
                return 7;
            }
        };
        var e = assertThrows(IOException.class,
                () -> Runs.bandwidth(lying, ByteBuffer.allocate(16), 100, Progress.silent()));
        assertTrue(e.getMessage().contains("acknowledged 7 bytes, expected 100"), e.getMessage());
    }
}
