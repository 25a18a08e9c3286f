package io.rdmacomm.kvstore;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmacomm.api.Endpoint;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Sessions sharing a control-plane connection ({@link KvClient#connect(KvControlClient, KvClient.Options)}), and
 * the server's limit on control-plane connections ({@link KvServerConfig#maxControlConnections()}).
 */
@Timeout(60)
class KvControlConnectionsTest {
    private static final AtomicInteger NAMES = new AtomicInteger();
    private static final KvClient.Options OPTIONS = KvClient.Options.defaults().withBuffer(64 * 1024)
            .withName("shared");
    private final List<AutoCloseable> open = new ArrayList<>();
    private KvServer server;

    private void start(int maxControlConnections) throws IOException {
        Endpoint data = Endpoint.parse("local://kv-control-" + NAMES.incrementAndGet());
        server = KvServer.start(KvServerConfig.of("127.0.0.1", 0, data).withLimits(64, 64, Duration.ofSeconds(10))
                .withMaxControlConnections(maxControlConnections));
    }

    private <T extends AutoCloseable> T track(T c) {
        open.add(c);
        return c;
    }

    @AfterEach
    void closeAll() throws Exception {
        for (int i = open.size() - 1; i >= 0; i--) {
            open.get(i).close();
        }
        if (server != null) {
            server.close();
        }
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void sessionsOfOneControlConnectionWorkAndClosingOneLeavesTheOthers() throws Exception {
        start(1);
        KvControlClient control = track(KvControlClient.connect(server.controlAddress(), Duration.ofSeconds(10)));
        List<KvClient> sessions = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            sessions.add(track(KvClient.connect(control, OPTIONS)));
        }
        assertEquals(5, server.stats().sessions(), "five sessions over one control connection (the limit is 1)");
        for (int i = 0; i < 5; i++) {
            sessions.get(i).put(bytes("k" + i), bytes("value " + i));
        }
        sessions.get(0).close();
        for (int i = 1; i < 5; i++) {
            ByteBuffer v = sessions.get(i).get(bytes("k" + ((i + 1) % 5)));
            byte[] got = new byte[v.remaining()];
            v.get(got);
            assertArrayEquals(bytes("value " + ((i + 1) % 5)), got);
        }
        // the shared control plane outlived the session that closed
        assertArrayEquals(bytes("value 3"), control.get(bytes("k3")));
        assertTrue(sessions.get(4).control() == control);
    }

    @Test
    void aSessionOnAControlConnectionPastTheLimitIsRefusedWithTheReasonUntilOneCloses() throws Exception {
        start(2);
        KvClient first = KvClient.connect(server.controlAddress(), OPTIONS);
        track(KvClient.connect(server.controlAddress(), OPTIONS));
        KvException refused = assertThrows(KvException.class,
                () -> track(KvClient.connect(server.controlAddress(), OPTIONS)));
        assertEquals(KvException.Code.BUSY, refused.code());
        assertTrue(refused.getMessage().contains("control-plane connections")
                && refused.getMessage().contains("maximum of 2"), refused.getMessage());
        first.close();
        // the server counts a connection until gRPC reports it terminated: retried until then, within a bound
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        KvClient third = null;
        while (third == null) {
            try {
                third = track(KvClient.connect(server.controlAddress(), OPTIONS));
            } catch (KvException e) {
                assertEquals(KvException.Code.BUSY, e.code(), e.getMessage());
                assertTrue(System.nanoTime() < deadline, "still refused 20 s after a control connection closed: "
                        + e.getMessage());
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
            }
        }
        third.put(bytes("k"), bytes("v"));
        assertEquals(2, server.stats().sessions());
    }
}
