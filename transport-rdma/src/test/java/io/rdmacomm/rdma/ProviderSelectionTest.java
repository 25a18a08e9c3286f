package io.rdmacomm.rdma;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmacomm.api.Endpoint;
import io.rdmacomm.rdma.spi.RdmaChannel;
import io.rdmacomm.rdma.spi.RdmaNode;
import io.rdmacomm.rdma.spi.RdmaProvider;
import java.net.InetAddress;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.ServiceConfigurationError;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** What provider=ucx (a wire family) stands for, how providers are ranked, and what a missing provider says. */
@Timeout(30)
class ProviderSelectionTest {

    private record Fake(String name, Optional<String> unavailabilityCause, String wireFamily, int priority)
            implements RdmaProvider {
        Fake(String name, Optional<String> unavailabilityCause) {
            this(name, unavailabilityCause, "ucx", name.equals("ucx-ffm") ? 7 : 5);
        }

        @Override
        public RdmaNode node(InetAddress localInterface, RdmaChannel.Role side) {
            throw new UnsupportedOperationException();
        }

        @Override
        public Optional<String> absenceCause(String name) {
            return name.equals("known-elsewhere") ? Optional.of("it lives in module x") : Optional.empty();
        }
    }

    private static final Fake FFM = new Fake("ucx-ffm", Optional.empty());
    private static final Fake FFM_NO_ACCESS = new Fake("ucx-ffm", Optional.of("native access is not enabled"));
    private static final Fake JUCX = new Fake("ucx-jucx", Optional.empty());
    private static final Fake JUCX_NO_LIBUCX = new Fake("ucx-jucx", Optional.of("libucp.so.0 not found"));
    private static final Fake VERBS = new Fake("verbs", Optional.empty(), "verbs", 10);

    @Test
    void aProviderThisJvmCannotLoadIsSkippedAndTheOthersRemain() {
        // what ServiceLoader's iterator does on JDK 17 with a ucx-ffm jar compiled for JDK 22+ on the class path
        Iterator<RdmaProvider> found = new Iterator<>() {
            private int calls;

            @Override
            public boolean hasNext() {
                calls++;
                if (calls == 1) {
                    throw new UnsupportedClassVersionError("FfmProvider has been compiled by a more recent version");
                }
                return calls == 2;
            }

            @Override
            public RdmaProvider next() {
                return JUCX;
            }
        };
        assertEquals(Map.of("ucx-jucx", JUCX), RdmaCommunicatorProvider.providers(found));
    }

    @Test
    void anIteratorThatNeverStopsFailingEndsTheSearch() {
        Iterator<RdmaProvider> broken = new Iterator<>() {
            @Override
            public boolean hasNext() {
                throw new ServiceConfigurationError("io.rdmacomm.rdma.spi.RdmaProvider: Provider not found");
            }

            @Override
            public RdmaProvider next() {
                throw new AssertionError("hasNext never said yes");
            }
        };
        assertEquals(Map.of(), RdmaCommunicatorProvider.providers(broken));
    }

    @Test
    void ucxIsFfmWhereItRunsElseJucx() {
        assertSame(FFM, RdmaCommunicatorProvider.select("ucx", Map.of("ucx-ffm", FFM, "ucx-jucx", JUCX)));
        assertSame(JUCX, RdmaCommunicatorProvider.select("ucx",
                Map.of("ucx-ffm", FFM_NO_ACCESS, "ucx-jucx", JUCX)));
        assertSame(JUCX, RdmaCommunicatorProvider.select("ucx", Map.of("ucx-jucx", JUCX)));
        assertSame(FFM_NO_ACCESS, RdmaCommunicatorProvider.select("ucx", Map.of("ucx-ffm", FFM_NO_ACCESS)));
    }

    @Test
    void aForcedProviderIsTakenAsIs() {
        assertSame(JUCX, RdmaCommunicatorProvider.select("ucx-jucx", Map.of("ucx-ffm", FFM, "ucx-jucx", JUCX)));
        assertSame(FFM_NO_ACCESS, RdmaCommunicatorProvider.select("ucx-ffm", Map.of("ucx-ffm", FFM_NO_ACCESS)));
        assertNull(RdmaCommunicatorProvider.select("ucx-ffm", Map.of("ucx-jucx", JUCX)));
    }

    @Test
    void aFamilyRunsOnItsHighestRankedAvailableProviderAndSkipsTheUnavailable() {
        Fake best = new Fake("best", Optional.of("no device"), "fam", 9);
        Fake good = new Fake("good", Optional.empty(), "fam", 6);
        Fake other = new Fake("other", Optional.empty(), "fam", 6);
        Fake poor = new Fake("poor", Optional.empty(), "fam", 2);
        Fake stranger = new Fake("stranger", Optional.empty(), "elsewhere", 10);
        Map<String, RdmaProvider> all = Map.of("best", best, "good", good, "other", other, "poor", poor,
                "stranger", stranger);
        // best cannot run; of the two of priority 6 the first by name; another family's, however high, is no choice
        assertSame(good, RdmaCommunicatorProvider.select("fam", all));
        assertEquals(List.of(best, good, other, poor), RdmaCommunicatorProvider.family("fam", all));
        // a provider named runs whatever its rank and availability
        assertSame(best, RdmaCommunicatorProvider.select("best", all));
        assertSame(poor, RdmaCommunicatorProvider.select("poor", all));
        // none available: the lowest ranked, whose cause the user is told
        Fake worst = new Fake("worst", Optional.of("no library"), "fam", 1);
        assertSame(worst, RdmaCommunicatorProvider.select("fam", Map.of("best", best, "worst", worst)));
        assertNull(RdmaCommunicatorProvider.select("nothing", all));
    }

    @Test
    void ucxRunsOnUcxJucxWhereBothCannotRunAndNeverOnVerbs() {
        assertSame(JUCX_NO_LIBUCX, RdmaCommunicatorProvider.select("ucx",
                Map.of("ucx-ffm", FFM_NO_ACCESS, "ucx-jucx", JUCX_NO_LIBUCX)));
        assertSame(JUCX, RdmaCommunicatorProvider.select("ucx", Map.of("ucx-jucx", JUCX, "verbs", VERBS)));
        assertNull(RdmaCommunicatorProvider.select("ucx", Map.of("verbs", VERBS)));
        assertSame(VERBS, RdmaCommunicatorProvider.select("verbs", Map.of("ucx-jucx", JUCX, "verbs", VERBS)));
    }

    @Test
    void aMissingProviderIsExplainedByOneThatKnowsOfIt() {
        String known = RdmaCommunicatorProvider.missing("known-elsewhere", Map.of("ucx-jucx", JUCX));
        assertEquals("no RDMA provider known-elsewhere on the class path: it lives in module x; available: [ucx-jucx]",
                known);
        // transport-rdma's own tests have no provider on the class path
        String cause = new RdmaCommunicatorProvider().unavailabilityCause(
                Endpoint.parse("rdma://127.0.0.1:1?provider=ucx-ffm")).orElseThrow();
        assertTrue(cause.startsWith("no RDMA provider named 'ucx-ffm'"), cause);
    }
}
