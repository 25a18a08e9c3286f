package io.rdmacomm.rdma.ucx.jucx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmacomm.api.Endpoint;
import io.rdmacomm.rdma.RdmaCommunicatorProvider;
import io.rdmacomm.rdma.spi.RdmaChannel;
import io.rdmacomm.rdma.spi.RdmaNode;
import io.rdmacomm.rdma.spi.RdmaProvider;
import java.net.InetAddress;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** What ucx-jucx says when provider=ucx runs on it, and of a missing ucx-ffm. */
@Timeout(30)
class JucxProviderTest {

    private record Fake(String name, Optional<String> unavailabilityCause) implements RdmaProvider {
        @Override
        public RdmaNode node(InetAddress localInterface, RdmaChannel.Role side) {
            throw new UnsupportedOperationException();
        }
    }

    private static final Fake FFM_NO_ACCESS = new Fake("ucx-ffm", Optional.of("native access is not enabled"));

    @Test
    void ucxFfmRanksAboveUcxJucx() {
        assertEquals(5, new JucxProvider().priority());
        assertEquals("ucx", new JucxProvider().wireFamily());
    }

    @Test
    void aMissingFfmProviderIsExplained() {
        // this module's tests have ucx-jucx on the class path, not ucx-ffm
        String cause = new RdmaCommunicatorProvider().unavailabilityCause(
                Endpoint.parse("rdma://127.0.0.1:1?provider=ucx-ffm")).orElseThrow();
        assertTrue(cause.contains("ucx-ffm") && cause.contains("JDK 22") && cause.contains("transport-rdma-ucx-ffm"),
                cause);
    }

    @Test
    void theNoticeOfTheJucxFallbackSaysWhyAndHowToGetFfm() {
        String jdk17 = JucxProvider.notice(null, 17, "/usr/lib/jvm/java-17", null);
        assertTrue(jdk17.startsWith("rdma:// runs on ucx-jucx, the slower UCX provider") && jdk17.contains("JDK 22")
                && jdk17.contains("this JVM is 17") && jdk17.contains("JAVA_HOME="), jdk17);
        String noModule = JucxProvider.notice(null, 25, "/usr/lib/jvm/jdk-25", null);
        assertTrue(noModule.contains("not on the class path")
                && noModule.contains("JAVA_HOME=/usr/lib/jvm/jdk-25 ./mvnw -q -DskipTests package"), noModule);
        String launcher = JucxProvider.notice(null, 25, "/usr/lib/jvm/jdk-25", "(cd /r && make)");
        assertTrue(launcher.contains("rebuild with this JDK: (cd /r && make)"), launcher);
        String noAccess = JucxProvider.notice(FFM_NO_ACCESS, 25, "/usr/lib/jvm/jdk-25", null);
        assertTrue(noAccess.contains("ucx-ffm cannot run here: native access is not enabled"), noAccess);
        assertTrue(new JucxProvider().familyChoiceNotice(List.of(FFM_NO_ACCESS)).orElseThrow()
                .startsWith("rdma:// runs on ucx-jucx"));
    }
}
