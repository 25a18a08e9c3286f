package io.rdmacomm.testkit;

import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.Communicators;
import java.io.IOException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
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
public abstract class PeerDeathContractTest extends PeerProcessKit {
    private static final Logger LOG = LoggerFactory.getLogger(PeerDeathContractTest.class);
    /** How long the survivor may take to notice; UCX sees the socket of the dead process close. */
    private static final long DETECT_SECONDS = 15;


    /** {@code serverUri}: a URI to serve on with port 0 and an explicit query ({@code ...?provider=ucx-ffm}). */
    protected PeerDeathContractTest(String serverUri) {
        super(serverUri);
    }

    @Test
    public void blockedReadFailsWhenTheWritingPeerIsKilled() throws Exception {
        try (Communicator server = Communicators.serve(serverUri + "&acceptTimeout=30s")) {
            peer = PeerProcess.start("write", server);
            try (Communicator survivor = server.accept()) {
                CompletableFuture<Long> reader = PeerProcess.readUntilFailure(survivor, "killed");
                peer.expect("STREAMING");
                peer.kill();
                long killed = System.nanoTime();
                ExecutionException e = assertThrows(ExecutionException.class,
                        () -> reader.get(DETECT_SECONDS, TimeUnit.SECONDS));
                long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killed);
                assertInstanceOf(IOException.class, e.getCause().getCause(), e.toString());
                LOG.info("read failed {} ms after the kill: {}", millis, e.getCause().getCause().toString());
            }
        }
    }

    @Test
    public void writeBlockedOnCreditsFailsWhenTheSilentPeerIsKilled() throws Exception {
        // a small ring makes rdma:// run out of credits soon; other transports block on their socket buffers
        String ring = serverUri.startsWith("rdma:") ? "&ringSize=64k" : "";
        try (Communicator server = Communicators.serve(serverUri + "&acceptTimeout=30s" + ring)) {
            peer = PeerProcess.start("sink", server);
            try (Communicator survivor = server.accept()) {
                peer.expect("CONNECTED");
                CompletableFuture<Void> writer = PeerProcess.writeUntilFailure(survivor);
                // the 64k ring fills at once and the peer never reads: the writer is blocked on credits
                assertThrows(TimeoutException.class, () -> writer.get(500, TimeUnit.MILLISECONDS));
                peer.kill();
                long killed = System.nanoTime();
                ExecutionException e = assertThrows(ExecutionException.class,
                        () -> writer.get(DETECT_SECONDS, TimeUnit.SECONDS));
                long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killed);
                assertInstanceOf(IOException.class, e.getCause().getCause(), e.toString());
                LOG.info("write failed {} ms after the kill: {}", millis, e.getCause().getCause().toString());
            }
        }
    }
}
