package io.rdmacomm.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(120)
class PeerSignalsTest {
    /** A child that sends its arguments as signals, then exits 0. */
    public static final class Sender {
        public static void main(String[] args) throws Exception {
            for (String a : args) {
                PeerSignals.send(a);
            }
        }
    }

    @Test
    void signalsArriveInOrderAndTheEndOfTheChildEndsThem() throws Exception {
        try (PeerSignals signals = PeerSignals.listen()) {
            Process p = signals.start(ChildJvm.of(Sender.class, List.of("SERVING tcp://x:1", "noise", "PEER a 17")));
            assertEquals("SERVING tcp://x:1", signals.next(60));
            assertEquals("PEER a 17", signals.await("PEER ", 60));
            assertNull(signals.next(60), "the child's exit closes the channel");
            assertTrue(p.waitFor(30, TimeUnit.SECONDS));
            assertEquals(0, p.exitValue());
        }
    }

    @Test
    void aChildThatEndsWithoutSignallingGivesNullWithoutWaitingOutTheTimeout() throws Exception {
        try (PeerSignals signals = PeerSignals.listen()) {
            signals.start(new ProcessBuilder("sh", "-c", "exit 3"));
            long start = System.nanoTime();
            assertNull(signals.next(60));
            assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(20), "waited for the timeout");
        }
    }

    @Test
    void aSilentChildTimesOut() throws Exception {
        try (PeerSignals signals = PeerSignals.listen()) {
            Process p = signals.start(new ProcessBuilder("sleep", "60"));
            try {
                TimeoutException e = assertThrows(TimeoutException.class, () -> signals.next(1));
                assertTrue(e.getMessage().contains("within 1 s"), e.getMessage());
            } finally {
                p.destroyForcibly();
            }
        }
    }

    @Test
    void aProcessNotStartedThroughPeerSignalsIsToldSo() {
        // this JVM was not started by PeerSignals: its environment names no test to signal
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> PeerSignals.send("x"));
        assertTrue(e.getMessage().contains(PeerSignals.ENV), e.getMessage());
    }
}
