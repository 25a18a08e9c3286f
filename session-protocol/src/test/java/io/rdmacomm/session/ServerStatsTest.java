package io.rdmacomm.session;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmacomm.api.CommunicatorException;
import io.rdmacomm.api.RegisteredMemory;
import io.rdmacomm.testkit.ScriptedPeer;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(10)
class ServerStatsTest {

    private static byte[] bytes(ByteBuffer b) {
        byte[] r = new byte[b.remaining()];
        b.duplicate().get(r);
        return r;
    }

    @Test
    void encodesCountThenNameAndValuePairsInOrderAndRoundTrips() throws Exception {
        ServerStats stats = ServerStats.builder().put("sessions", 2).put("regionBytes", 1L << 40).build();
        assertArrayEquals(new byte[] {0, 2, 8, 's', 'e', 's', 's', 'i', 'o', 'n', 's', 0, 0, 0, 0, 0, 0, 0, 2,
            11, 'r', 'e', 'g', 'i', 'o', 'n', 'B', 'y', 't', 'e', 's', 0, 0, 1, 0, 0, 0, 0, 0}, bytes(stats.encode()));
        ServerStats back = ServerStats.decode(stats.encode());
        assertEquals(stats, back);
        assertEquals(List.of("sessions", "regionBytes"), List.copyOf(back.values().keySet()));
        assertEquals(OptionalLong.of(2), back.get("sessions"));
        assertEquals(OptionalLong.empty(), back.get("threads"));
        assertEquals("sessions=2 regionBytes=1099511627776", back.toLine());
    }

    @Test
    void registeredMemoryIsReportedInTotalAndPerTransport() {
        RegisteredMemory.Counter c = RegisteredMemory.counter("stats-test");
        c.registered(4096);
        try {
            ServerStats stats = ServerStats.builder().putRegisteredMemory().build();
            RegisteredMemory.Usage total = RegisteredMemory.total();
            assertEquals(OptionalLong.of(total.regions()), stats.get("regions"));
            assertEquals(OptionalLong.of(total.bytes()), stats.get("regionBytes"));
            assertEquals(OptionalLong.of(1), stats.get("regions.stats-test"));
            assertEquals(OptionalLong.of(4096), stats.get("regionBytes.stats-test"));
            assertTrue(stats.encode().remaining() <= SessionProtocol.MAX_RESULT_BODY);
        } finally {
            c.released(4096);
        }
    }

    @Test
    void theBuilderRefusesBadNamesRepeatsAndOverflow() {
        assertThrows(IllegalArgumentException.class, () -> ServerStats.builder().put("a b", 1));
        assertThrows(IllegalArgumentException.class, () -> ServerStats.builder().put("x".repeat(65), 1));
        assertThrows(IllegalArgumentException.class, () -> ServerStats.builder().put("a", 1).put("a", 2));
        ServerStats.Builder full = ServerStats.builder();
        for (int i = 0; i < ServerStats.MAX_ENTRIES; i++) {
            full.put("c" + i, i);
        }
        assertThrows(IllegalArgumentException.class, () -> full.put("one-more", 0));
        assertTrue(full.build().encode().remaining() <= SessionProtocol.MAX_RESULT_BODY);
    }

    private static String refusal(byte[] body) {
        return assertThrows(CommunicatorException.class, () -> ServerStats.decode(ByteBuffer.wrap(body)))
                .getMessage();
    }

    @Test
    void malformedReportsAreRefusedNamingTheProblem() {
        byte[] good = bytes(ServerStats.builder().put("sessions", 1).build().encode());
        assertTrue(refusal(new byte[] {0, 65}).contains("65 counters, more than the limit of 64"));
        assertTrue(refusal(new byte[] {1}).contains("cut short"));
        assertTrue(refusal(java.util.Arrays.copyOf(good, good.length - 1)).contains("cut short"));
        assertTrue(refusal(java.util.Arrays.copyOf(good, good.length + 1)).contains("followed by 1 more bytes"));
        assertTrue(refusal(new byte[] {0, 1, 0}).contains("name of 0 bytes"));
        assertTrue(refusal(new byte[] {0, 1, 1, '/', 0, 0, 0, 0, 0, 0, 0, 0}).contains("invalid name"));
        ByteBuffer twice = ByteBuffer.allocate(2 + 2 * 10).putShort((short) 2);
        for (int i = 0; i < 2; i++) {
            twice.put((byte) 1).put((byte) 'a').putLong(i);
        }
        assertTrue(refusal(twice.array()).contains("'a' twice"));
    }

    @Test
    void theClientReadsTheReportFromAnOkResultAndReportsAnError() throws Exception {
        ServerStats stats = ServerStats.builder().put("sessions", 1).put("regions", 0).build();
        ScriptedPeer ok = new ScriptedPeer(bytes(ExchangeResult.ok(stats.encode()).encode()), 3);
        assertEquals(stats, ServerStats.read(ok.communicator()));
        ScriptedPeer failed = new ScriptedPeer(bytes(ExchangeResult.error(SessionStatus.FAILED, "no").encode()), 3);
        SessionException e = assertThrows(SessionException.class, () -> ServerStats.read(failed.communicator()));
        assertEquals(SessionStatus.FAILED, e.status());
    }
}
