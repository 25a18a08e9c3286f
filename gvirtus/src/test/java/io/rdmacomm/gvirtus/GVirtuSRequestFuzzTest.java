package io.rdmacomm.gvirtus;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.rdmacomm.api.CommunicatorException;
import io.rdmacomm.testkit.fuzz.ParserChecks;
import io.rdmacomm.testkit.fuzz.ScriptedStream;
import java.io.EOFException;
import java.util.Arrays;
import java.util.Optional;
import org.junit.jupiter.api.Timeout;

/**
 * A GVirtuS backend's reading of requests on arbitrary bytes in short reads, with the default limits: every request
 * is refused with a {@link CommunicatorException} or an {@link EOFException}, or read into a request that writes
 * back to exactly the bytes consumed, until the stream ends; nothing else is thrown. A request's allocation follows
 * the bytes that arrived, not the length it declares: a peer that announces 256 MiB and sends ten bytes costs ten
 * bytes, not 256 MiB. Regression inputs: {@code src/test/resources/io/rdmacomm/gvirtus/GVirtuSRequestFuzzTestInputs/}.
 */
@Timeout(120)
class GVirtuSRequestFuzzTest {
    /**
     * Per input byte, a few copies (chunks, the request, its re-encoding); per request, a constant (its head buffer of
     * {@code maxRoutineNameBytes} + 8, the name's decoding, the request and its re-encoding: about 0.8 KiB measured),
     * with at most one request per 9 input bytes (a NUL and the 8-byte input length); and slack for the first use of
     * classes and a first payload chunk. What must not happen is an allocation that follows a declared length.
     */
    static long allocationCap(byte[] input) {
        return 8L * input.length + 2048L * (input.length / 9 + 1) + 256 * 1024;
    }

    @FuzzTest(maxDuration = "30s")
    void requests(byte[] input) throws Exception {
        ScriptedStream[] peer = new ScriptedStream[2];
        ParserChecks.Outcome<Integer> outcome = ParserChecks.parse(allocationCap(input), () -> {
            // plain streams, not mocks: a mock allocates a few KiB a call, which would count as the parser's
            ScriptedStream in = new ScriptedStream(input, 7);
            ScriptedStream out = new ScriptedStream(new byte[0], 1);
            peer[0] = in;
            peer[1] = out;
            int consumed = 0;
            for (Optional<GVirtuSRequest> r = GVirtuSRequest.readFrom(in, GVirtuSLimits.DEFAULT);
                    r.isPresent(); r = GVirtuSRequest.readFrom(in, GVirtuSLimits.DEFAULT)) {
                r.get().writeTo(out);
                GVirtuSRequest request = r.get();
                assertEquals(in.consumed(), out.writtenCount(),
                        () -> "request " + request + " writes back as many bytes as it was read from");
                consumed = in.consumed();
            }
            return consumed;
        }, CommunicatorException.class, EOFException.class);
        // whatever ended the stream, the requests read before it write back to exactly their bytes
        assertArrayEquals(Arrays.copyOf(input, peer[1].writtenCount()), peer[1].written(),
                "the requests read write back to their bytes");
        if (outcome.accepted()) {
            assertEquals(input.length, outcome.value(), "every byte belongs to a request");
        }
    }
}
