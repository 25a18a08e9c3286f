package io.rdmacomm.rdma;

import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmacomm.api.Endpoint;
import io.rdmacomm.rdma.spi.ChannelHandler;
import io.rdmacomm.rdma.spi.ListenerHandler;
import io.rdmacomm.rdma.spi.RdmaChannel;
import io.rdmacomm.rdma.spi.RdmaListener;
import io.rdmacomm.rdma.spi.RdmaProvider;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** What provider=ucx stands for, and what a forced provider that cannot run says. */
@Timeout(30)
class ProviderSelectionTest {

    private record Fake(String name, Optional<String> unavailabilityCause) implements RdmaProvider {
        @Override
        public RdmaChannel connect(InetSocketAddress peer, Duration timeout, ChannelHandler handler) {
            throw new UnsupportedOperationException();
        }

        @Override
        public RdmaListener listen(InetSocketAddress address, ListenerHandler handler) {
            throw new UnsupportedOperationException();
        }
    }

    private static final Fake FFM = new Fake("ucx-ffm", Optional.empty());
    private static final Fake FFM_NO_ACCESS = new Fake("ucx-ffm", Optional.of("native access is not enabled"));
    private static final Fake JUCX = new Fake("ucx-jucx", Optional.empty());

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
}
