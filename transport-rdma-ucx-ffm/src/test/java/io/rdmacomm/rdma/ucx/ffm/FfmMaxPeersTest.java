package io.rdmacomm.rdma.ucx.ffm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.Communicators;
import io.rdmacomm.testkit.ChildJvm;
import io.rdmacomm.testkit.HoldConnectionsMain;
import io.rdmacomm.testkit.PeerSignals;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code maxPeers}: a server holds connections from at most that many peer processes. With {@code maxPeers=1} and
 * this process connected, more connections from this process are served, a connection from another process is
 * refused with the reason, and once this process's connections are closed the other process is served.
 */
@Timeout(120)
class FfmMaxPeersTest {
    @TempDir
    Path dir;

    @Test
    void aConnectionFromOneProcessPastMaxPeersIsRefusedWithTheReason() throws Exception {
        try (Communicator server = Communicators.serve("rdma://127.0.0.1:0?provider=ucx-ffm&maxPeers=1"
                + "&acceptTimeout=60s&ringSize=64k")) {
            String at = server.endpoint().toString();
            try (Communicator first = Communicators.connect(at); Communicator firstAccepted = server.accept();
                    Communicator second = Communicators.connect(at); Communicator secondAccepted = server.accept()) {
                echo(first, firstAccepted);
                echo(second, secondAccepted);

                Path err = dir.resolve("refused.err");
                try (PeerSignals signals = PeerSignals.listen()) {
                    Process p = signals.start(ChildJvm.of(HoldConnectionsMain.class, List.of(at, "1"))
                            .redirectError(err.toFile()));
                    assertNull(signals.await("CONNECTED", 60), "the second process connected");
                    assertTrue(p.waitFor(30, TimeUnit.SECONDS), "the refused process ended");
                    assertNotEquals(0, p.exitValue());
                }
                String log = Files.readString(err);
                assertTrue(log.contains("refused the connection") && log.contains("maxPeers=1"), log);
                echo(first, firstAccepted);
            }
            // this process's connections are gone, and with them its endpoint: the other process is served now
            try (PeerSignals signals = PeerSignals.listen()) {
                Process p = signals.start(ChildJvm.of(HoldConnectionsMain.class, List.of(at, "1"))
                        .redirectError(dir.resolve("served.err").toFile()));
                try (Communicator accepted = server.accept()) {
                    ByteBuffer one = ByteBuffer.allocateDirect(1);
                    accepted.readFully(one);
                    accepted.write(one.flip());
                    accepted.sync();
                    assertEquals("CONNECTED 1", signals.await("CONNECTED", 60),
                            () -> "the other process, once this one left: " + readQuietly(dir.resolve("served.err")));
                    p.getOutputStream().close();
                    assertTrue(p.waitFor(30, TimeUnit.SECONDS));
                    assertEquals(0, p.exitValue());
                }
            }
        }
    }

    private static void echo(Communicator client, Communicator accepted) throws Exception {
        ByteBuffer out = ByteBuffer.allocateDirect(16);
        for (int i = 0; i < 16; i++) {
            out.put(i, (byte) (i * 3));
        }
        client.write(out);
        client.sync();
        ByteBuffer in = ByteBuffer.allocateDirect(16);
        accepted.readFully(in);
        assertEquals(out.flip(), in.flip());
    }

    private static String readQuietly(Path p) {
        try {
            return Files.readString(p);
        } catch (Exception e) {
            return e.toString();
        }
    }
}
