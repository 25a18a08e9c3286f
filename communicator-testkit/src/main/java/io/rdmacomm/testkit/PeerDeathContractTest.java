package io.rdmacomm.testkit;

import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.Communicators;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Killing the peer process (SIGKILL, a second JVM) mid-transfer ends the survivor's blocked read or write with an
 * IOException, with no read timeout configured: the transport itself must notice the vanished peer (rdma:// over
 * UCX: the endpoint's error handler). A transport's test extends this with its server endpoint.
 */
@Timeout(60)
public abstract class PeerDeathContractTest {
    private static final Logger LOG = LoggerFactory.getLogger(PeerDeathContractTest.class);
    /** How long the survivor may take to notice; UCX sees the socket of the dead process close. */
    private static final long DETECT_SECONDS = 15;

    private final String serverUri;
    private Process peer;

    /** {@code serverUri}: a URI to serve on with port 0 and an explicit query ({@code ...?provider=ucx-ffm}). */
    protected PeerDeathContractTest(String serverUri) {
        this.serverUri = serverUri;
    }

    @AfterEach
    void killPeer() throws InterruptedException {
        if (peer != null) {
            peer.destroyForcibly();
            peer.waitFor(10, TimeUnit.SECONDS);
        }
    }

    private LinkedBlockingQueue<String> startPeer(String mode, Communicator server) throws IOException {
        ProcessBuilder pb = ChildJvm.of(PeerDeathMain.class, List.of(mode, server.endpoint().toString()));
        pb.redirectError(ProcessBuilder.Redirect.INHERIT);
        peer = pb.start();
        LinkedBlockingQueue<String> lines = new LinkedBlockingQueue<>();
        Thread pump = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(peer.getInputStream(),
                    StandardCharsets.UTF_8))) {
                for (String line; (line = r.readLine()) != null;) {
                    lines.add(line);
                }
            } catch (IOException e) {
                lines.add("EOF " + e);
            }
        }, "peer-stdout");
        pump.setDaemon(true);
        pump.start();
        return lines;
    }

    private static void expect(LinkedBlockingQueue<String> lines, String what) throws InterruptedException {
        while (true) {
            String line = lines.poll(30, TimeUnit.SECONDS);
            assertTrue(line != null, "the peer process did not print " + what + " within 30 s");
            if (line.equals(what)) {
                return;
            }
        }
    }

    @Test
    public void blockedReadFailsWhenTheWritingPeerIsKilled() throws Exception {
        try (Communicator server = Communicators.serve(serverUri + "&acceptTimeout=30s")) {
            LinkedBlockingQueue<String> lines = startPeer("write", server);
            try (Communicator survivor = server.accept()) {
                CompletableFuture<Long> reader = CompletableFuture.supplyAsync(() -> {
                    ByteBuffer b = ByteBuffer.allocateDirect(1 << 20);
                    long total = 0;
                    try {
                        while (true) {
                            int n = survivor.read(b.clear());
                            if (n < 0) {
                                throw new AssertionError("clean end of stream from a killed peer after " + total);
                            }
                            total += n;
                        }
                    } catch (IOException e) {
                        throw new RuntimeException(e);
                    }
                });
                expect(lines, "STREAMING");
                peer.destroyForcibly();
                long killed = System.nanoTime();
                ExecutionException e = org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class,
                        () -> reader.get(DETECT_SECONDS, TimeUnit.SECONDS));
                long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killed);
                assertInstanceOf(IOException.class, e.getCause().getCause(), e.toString());
                LOG.info("read failed {} ms after the kill: {}", millis, e.getCause().getCause().toString());
            }
        }
    }

    @Test
    public void writeBlockedOnCreditsFailsWhenTheSilentPeerIsKilled() throws Exception {
        try (Communicator server = Communicators.serve(serverUri + "&acceptTimeout=30s&ringSize=64k")) {
            LinkedBlockingQueue<String> lines = startPeer("sink", server);
            try (Communicator survivor = server.accept()) {
                expect(lines, "CONNECTED");
                CompletableFuture<Void> writer = CompletableFuture.runAsync(() -> {
                    ByteBuffer b = ByteBuffer.allocateDirect(1 << 20);
                    try {
                        while (true) {
                            survivor.write(b.clear());
                            survivor.sync();
                        }
                    } catch (IOException e) {
                        throw new RuntimeException(e);
                    }
                });
                // the 64k ring fills at once and the peer never reads: the writer is blocked on credits
                org.junit.jupiter.api.Assertions.assertThrows(java.util.concurrent.TimeoutException.class,
                        () -> writer.get(500, TimeUnit.MILLISECONDS));
                peer.destroyForcibly();
                long killed = System.nanoTime();
                ExecutionException e = org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class,
                        () -> writer.get(DETECT_SECONDS, TimeUnit.SECONDS));
                long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killed);
                assertInstanceOf(IOException.class, e.getCause().getCause(), e.toString());
                LOG.info("write failed {} ms after the kill: {}", millis, e.getCause().getCause().toString());
            }
        }
    }
}
