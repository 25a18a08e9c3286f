package io.rdmacomm.rdma;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.rdmacomm.api.HandshakeException;
import io.rdmacomm.api.RegionDescriptor;
import io.rdmacomm.testkit.fuzz.ParserChecks;
import java.nio.ByteBuffer;
import org.junit.jupiter.api.Timeout;

/**
 * The engine's check of a peer's HELLO on arbitrary bytes: refused with a {@link HandshakeException} naming what
 * arrived, or accepted with a ring descriptor whose HELLO encodes back to exactly those bytes. Regression inputs:
 * {@code src/test/resources/io/rdmacomm/rdma/HelloMessageFuzzTestInputs/}.
 */
@Timeout(120)
class HelloMessageFuzzTest {
    @FuzzTest(maxDuration = "30s")
    void hello(byte[] input) {
        ByteBuffer m = ControlMessageFuzzTest.received(input);
        ParserChecks.Outcome<RegionDescriptor> outcome = ParserChecks.parse(ControlMessageFuzzTest.ALLOCATION_CAP,
                () -> HelloMessage.ring(m, "fuzz"), HandshakeException.class);
        if (outcome.accepted()) {
            RegionDescriptor ring = outcome.value();
            ByteBuffer encoded = HelloMessage.encode(ByteBuffer.allocate(HelloMessage.length(ring)), ring,
                    HelloMessage.heartbeat(m));
            assertArrayEquals(input, ParserChecks.bytes(encoded), "an accepted HELLO encodes back");
        }
        assertEquals(3, m.position(), "HELLO is read by absolute index only");
    }
}
