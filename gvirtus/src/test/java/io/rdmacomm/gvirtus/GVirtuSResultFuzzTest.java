package io.rdmacomm.gvirtus;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.rdmacomm.api.CommunicatorException;
import io.rdmacomm.testkit.fuzz.ParserChecks;
import io.rdmacomm.testkit.fuzz.ScriptedStream;
import java.io.EOFException;
import java.util.Arrays;
import org.junit.jupiter.api.Timeout;

/**
 * A GVirtuS frontend's reading of a reply on arbitrary bytes in short reads, with the default limits: refused with a
 * {@link CommunicatorException} or an {@link EOFException}, or read into a result that writes back to exactly the
 * bytes consumed; nothing else is thrown, and what it allocates follows the bytes that arrived, not the output
 * length declared. Regression inputs: {@code src/test/resources/io/rdmacomm/gvirtus/GVirtuSResultFuzzTestInputs/}.
 */
@Timeout(120)
class GVirtuSResultFuzzTest {
    @FuzzTest(maxDuration = "30s")
    void reply(byte[] input) throws Exception {
        ScriptedStream[] peer = new ScriptedStream[1];
        ParserChecks.Outcome<GVirtuSResult> outcome = ParserChecks.parse(
                GVirtuSRequestFuzzTest.allocationCap(input), () -> {
                    peer[0] = new ScriptedStream(input, 7);
                    return GVirtuSResult.readFrom(peer[0], GVirtuSLimits.DEFAULT);
                }, CommunicatorException.class, EOFException.class);
        if (outcome.accepted()) {
            ScriptedStream again = new ScriptedStream(new byte[0], 1);
            outcome.value().writeTo(again);
            assertArrayEquals(Arrays.copyOf(input, peer[0].consumed()), again.written(),
                    "a reply read writes back to its bytes");
        }
    }
}
