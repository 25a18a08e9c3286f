package io.rdmacomm.rdma.ucx.ffm;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.rdmacomm.api.CommunicatorException;
import io.rdmacomm.testkit.fuzz.ParserChecks;
import java.nio.ByteBuffer;
import java.util.Arrays;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Timeout;

/**
 * A peer's ring advert (the key of its ring's descriptor), as the writer reads it. First the parser on the bytes as
 * they came: refused with a {@link CommunicatorException} naming why, or accepted with fields that encode back to
 * exactly those bytes. Then the whole mapping on an advert of this host and this process built from them (the
 * descriptor number, size and token as they came; with a byte past the advert's length, bit 0 names the one live
 * ring here and bit 1 takes its size): refused with a message, whatever descriptor of this JVM it names (jars,
 * sockets, pipes, epoll, the ring itself with a token that differs), or mapped only where the token is the live
 * ring's. Regression inputs: {@code src/test/resources/io/rdmacomm/rdma/ucx/ffm/SharedRingAdvertFuzzTestInputs/}.
 */
@Timeout(120)
class SharedRingAdvertFuzzTest {
    private static final int LENGTH = 64 * 1024;
    private static final long PARSE_CAP = 16 * 1024;
    /** The mapping reads the named file's attributes (maps, paths, strings): bounded, whatever the advert says. */
    private static final long MAP_CAP = 512 * 1024;
    private static SharedRing live;

    @BeforeAll
    static void ring() throws Exception {
        live = SharedRing.create(LENGTH);
    }

    @AfterAll
    static void close() {
        live.close();
    }

    @FuzzTest(maxDuration = "30s")
    void advert(byte[] input) {
        ParserChecks.Outcome<SharedRing.Advert> parsed = ParserChecks.parse(PARSE_CAP,
                () -> SharedRing.parse(input, LENGTH), CommunicatorException.class);
        if (parsed.accepted()) {
            assertArrayEquals(input, parsed.value().encode(), "an accepted advert encodes back");
        }

        byte[] own = live.advert();
        byte[] advert = Arrays.copyOf(own, SharedRing.ADVERT_LENGTH);
        ByteBuffer in = ByteBuffer.wrap(Arrays.copyOf(input, SharedRing.ADVERT_LENGTH));
        int selector = input.length > SharedRing.ADVERT_LENGTH ? input[SharedRing.ADVERT_LENGTH] : 0;
        ByteBuffer out = ByteBuffer.wrap(advert);
        if ((selector & 1) == 0) {
            out.putInt(24, in.getInt(24));
        }
        if ((selector & 2) == 0) {
            out.putLong(28, in.getLong(28));
        }
        out.put(52, input.length >= SharedRing.ADVERT_LENGTH ? Arrays.copyOfRange(input, 52, 68) : new byte[16]);
        ParserChecks.Outcome<SharedRing> mapped = ParserChecks.parse(MAP_CAP, () -> SharedRing.map(advert, LENGTH),
                CommunicatorException.class);
        if (mapped.accepted()) {
            mapped.value().close();
            assertArrayEquals(own, advert, "only the live ring's own advert maps");
        }
    }
}
