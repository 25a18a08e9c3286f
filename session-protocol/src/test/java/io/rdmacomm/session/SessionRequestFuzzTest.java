package io.rdmacomm.session;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.rdmacomm.testkit.fuzz.ParserChecks;
import io.rdmacomm.testkit.fuzz.ScriptedStream;
import java.nio.ByteBuffer;
import java.util.Arrays;
import org.junit.jupiter.api.Timeout;

/**
 * The server's reading of a session request on arbitrary bytes, delivered in short reads: a request is refused
 * with a {@link SessionException} (carrying the status the server answers) or read into a request that encodes
 * back to exactly the bytes consumed; nothing else is thrown, and however large the lengths announced, a read
 * allocates no more than its parameter cap ({@link SessionProtocol#MAX_PARAMS_LENGTH}) and its stream need.
 * Regression inputs: {@code src/test/resources/io/rdmacomm/session/SessionRequestFuzzTestInputs/}.
 */
@Timeout(120)
class SessionRequestFuzzTest {
    /** The parameter cap, twice (the block and the request's copy), and slack for the first use of classes. */
    static final long ALLOCATION_CAP = 2L * SessionProtocol.MAX_PARAMS_LENGTH + 256 * 1024;

    @FuzzTest(maxDuration = "30s")
    void request(byte[] input) throws Exception {
        ScriptedStream[] peer = new ScriptedStream[1];
        ParserChecks.Outcome<SessionRequest> outcome = ParserChecks.parse(ALLOCATION_CAP, () -> {
            peer[0] = new ScriptedStream(input, 7);
            return SessionRequest.read(peer[0]);
        }, SessionException.class);
        if (outcome.accepted()) {
            ByteBuffer encoded = outcome.value().encode();
            byte[] consumed = Arrays.copyOf(input, peer[0].consumed());
            assertArrayEquals(consumed, ParserChecks.bytes(encoded), "a request read encodes back to its bytes");
        }
    }
}
