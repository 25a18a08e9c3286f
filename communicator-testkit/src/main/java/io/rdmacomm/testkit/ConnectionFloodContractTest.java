package io.rdmacomm.testkit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.Communicators;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A server flooded with more silent TCP connections than it has file descriptors still serves: the server runs in
 * a child JVM ({@link EchoPeerMain} {@code serve}) under {@code ulimit -n} {@value #DESCRIPTORS}; the test opens
 * {@value #FLOOD} connections to its port that never send a byte, then a real client connects and echoes a frame
 * within {@value #SERVED_WITHIN_SECONDS} s, and the server wrote a bounded number of lines about it (per-peer lines
 * are rate-limited).
 */
@Timeout(120)
public abstract class ConnectionFloodContractTest {
    /** The server's descriptor limit. */
    static final int DESCRIPTORS = 256;
    /** Silent connections, more than the server has descriptors. */
    static final int FLOOD = 600;
    static final int SERVED_WITHIN_SECONDS = 5;
    /** Lines the server may write on stderr during the flood (rate-limited at about one per logger a second). */
    static final int MAX_LOG_LINES = 40;

    private final String serverUri;

    /** {@code serverUri}: a URI on 127.0.0.1 with port 0 and an explicit query ({@code ...?provider=ucx-ffm}). */
    protected ConnectionFloodContractTest(String serverUri) {
        this.serverUri = serverUri;
    }

    @Test
    public void aFloodOfSilentConnectionsBeyondTheDescriptorLimitLeavesTheServerServing() throws Exception {
        Path err = Files.createTempFile("flood-server", ".err");
        ProcessBuilder child = ChildJvm.of(EchoPeerMain.class, List.of("serve", serverUri + "&acceptTimeout=100s"));
        List<String> command = new ArrayList<>(List.of("bash", "-c", "ulimit -n " + DESCRIPTORS + " && exec \"$@\"",
                "bash"));
        command.addAll(child.command());
        child.command(command).redirectError(err.toFile());
        List<SocketChannel> flood = new ArrayList<>();
        PeerSignals signals = PeerSignals.listen();
        Process server = signals.start(child);
        try {
            String serving = signals.await("SERVING ", 60);
            assertNotNull(serving, "the server ended before it signalled SERVING; its stderr: " + Files.readString(err));
            String endpoint = serving.substring("SERVING ".length());
            int port = java.net.URI.create(endpoint).getPort();
            InetSocketAddress at = new InetSocketAddress("127.0.0.1", port);
            for (int i = 0; i < FLOOD; i++) {
                flood.add(SocketChannel.open(at)); // completes once the kernel queued it: the server need not accept
            }
            long start = System.nanoTime();
            try (Communicator c = Communicators.connect(endpoint + (endpoint.contains("?") ? "&" : "?") + "connectTimeout=60s")) {
                EchoPeerMain.readFrame(c); // the server's region descriptor
                byte[] payload = "through the flood".getBytes(StandardCharsets.UTF_8);
                c.write(ByteBuffer.allocate(4 + payload.length).putInt(payload.length).put(payload).flip());
                c.sync();
                assertArrayEquals(payload, EchoPeerMain.readFrame(c));
                long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
                assertTrue(tookMillis <= SERVED_WITHIN_SECONDS * 1000L, "the client behind " + FLOOD
                        + " silent connections was served after " + tookMillis + " ms");
                c.write(ByteBuffer.allocate(4).putInt(EchoPeerMain.BYE).flip());
                c.sync();
            }
            assertTrue(server.waitFor(30, TimeUnit.SECONDS), "the server did not exit after the client's BYE");
            assertEquals(0, server.exitValue(), "the server's exit status; its stderr: " + Files.readString(err));
            List<String> lines = Files.readAllLines(err);
            assertFalse(lines.stream().anyMatch(l -> l.contains("no further connections")),
                    "the server stopped accepting: " + lines);
            assertTrue(lines.size() <= MAX_LOG_LINES, "the server wrote " + lines.size() + " lines: " + lines);
        } finally {
            for (SocketChannel s : flood) {
                s.close();
            }
            server.destroyForcibly();
            signals.close();
            Files.deleteIfExists(err);
        }
    }
}
