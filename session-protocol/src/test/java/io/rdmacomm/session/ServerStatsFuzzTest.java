package io.rdmacomm.session;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.rdmacomm.api.CommunicatorException;
import io.rdmacomm.testkit.fuzz.ParserChecks;
import java.nio.ByteBuffer;
import org.junit.jupiter.api.Timeout;

/**
 * The client's reading of a {@link ServerStats} report (the body of the {@link Exchange#STATS} result) on arbitrary
 * bytes: refused with a {@link CommunicatorException}, or read into a report that encodes back to exactly the bytes
 * given; nothing else is thrown, and a read allocates no more than the body cap allows
 * ({@link SessionProtocol#MAX_RESULT_BODY}, which {@link ExchangeResult#read} enforces before this parse).
 */
@Timeout(120)
class ServerStatsFuzzTest {
    /** Names and boxed values of at most {@link ServerStats#MAX_ENTRIES} entries, and slack for the first use of classes. */
    static final long ALLOCATION_CAP = 8L * SessionProtocol.MAX_RESULT_BODY + 256 * 1024;

    @FuzzTest(maxDuration = "30s")
    void report(byte[] input) throws Exception {
        ParserChecks.Outcome<ServerStats> outcome = ParserChecks.parse(ALLOCATION_CAP,
                () -> ServerStats.decode(ByteBuffer.wrap(input)), CommunicatorException.class);
        if (outcome.accepted()) {
            assertArrayEquals(input, ParserChecks.bytes(outcome.value().encode()), "a report encodes back to its bytes");
        }
    }
}
