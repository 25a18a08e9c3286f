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
import java.util.Map;
import java.util.Optional;
import java.util.ServiceConfigurationError;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** What provider=ucx stands for, and what a forced provider that cannot run says. */
@Timeout(30)
class ProviderSelectionTest {

    private record Fake(String name, Optional<String> unavailabilityCause) implements RdmaProvider {
        @Override
        public RdmaNode node(InetAddress localInterface, RdmaChannel.Role side) {
            throw new UnsupportedOperationException();
        }
    }

    private static final Fake FFM = new Fake("ucx-ffm", Optional.empty());
    private static final Fake FFM_NO_ACCESS = new Fake("ucx-ffm", Optional.of("native access is not enabled"));
    private static final Fake JUCX = new Fake("ucx-jucx", Optional.empty());

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
    void aMissingFfmProviderIsExplained() {
        // transport-rdma's own tests have neither UCX provider on the class path
        String cause = new RdmaCommunicatorProvider().unavailabilityCause(
                Endpoint.parse("rdma://127.0.0.1:1?provider=ucx-ffm")).orElseThrow();
        assertTrue(cause.contains("ucx-ffm") && cause.contains("JDK 22") && cause.contains("transport-rdma-ucx-ffm"),
                cause);
    }

    @Test
    void theNoticeOfTheJucxFallbackSaysWhyAndHowToGetFfm() {
        String jdk17 = RdmaCommunicatorProvider.jucxNotice(null, 17, "/usr/lib/jvm/java-17", null);
        assertTrue(jdk17.startsWith("rdma:// runs on ucx-jucx, the slower UCX provider") && jdk17.contains("JDK 22")
                && jdk17.contains("this JVM is 17") && jdk17.contains("JAVA_HOME="), jdk17);
        String noModule = RdmaCommunicatorProvider.jucxNotice(null, 25, "/usr/lib/jvm/jdk-25", null);
        assertTrue(noModule.contains("not on the class path")
                && noModule.contains("JAVA_HOME=/usr/lib/jvm/jdk-25 ./mvnw -q -DskipTests package"), noModule);
        String launcher = RdmaCommunicatorProvider.jucxNotice(null, 25, "/usr/lib/jvm/jdk-25", "(cd /r && make)");
        assertTrue(launcher.contains("rebuild with this JDK: (cd /r && make)"), launcher);
        String noAccess = RdmaCommunicatorProvider.jucxNotice(FFM_NO_ACCESS, 25, "/usr/lib/jvm/jdk-25", null);
        assertTrue(noAccess.contains("ucx-ffm cannot run here: native access is not enabled"), noAccess);
    }
}
