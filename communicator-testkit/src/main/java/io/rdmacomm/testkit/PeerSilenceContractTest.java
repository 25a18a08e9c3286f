package io.rdmacomm.testkit;

import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.Communicators;
import java.net.SocketTimeoutException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Stopping the peer process (SIGSTOP, a second JVM: alive to the kernel and the transport, silent) ends the
 * survivor's blocked read, write and sync with the liveness {@link SocketTimeoutException}, with no read timeout
 * configured; a peer that is alive but idle, or that never reads, is left alone. With liveness off, readTimeout
 * alone ends a write to a stopped peer, whatever the write waits for (socket space, ring credit, the completion of
 * a one-sided write). A transport's test extends this with its server endpoint.
 */
@Timeout(90)
public abstract class PeerSilenceContractTest extends PeerProcessKit {
    private static final Logger LOG = LoggerFactory.getLogger(PeerSilenceContractTest.class);
    /** Short, so the tests run quickly; the JVMs' pauses (GC, JIT, a loaded machine) stay well below it. */
    private static final String LIVENESS = "&liveness=2s";
    /** How long a blocked call must survive a live peer: twice the liveness. */
    private static final long ALIVE_MILLIS = 4000;
    /** Generous: the silence is noticed after the liveness and one check period. */
    private static final long DETECT_SECONDS = 15;


    /** {@code serverUri}: a URI to serve on with port 0 and an explicit query ({@code ...?provider=ucx-ffm}). */
    protected PeerSilenceContractTest(String serverUri) {
        super(serverUri);
    }

    /** A small receive ring on rdma://, so a writer blocks soon; tcp:// blocks once the socket buffers are full. */
    private String smallWindow() {
        return serverUri.startsWith("rdma:") ? "&ringSize=64k" : "";
    }

    /** Stops the peer; the blocked {@code call} must fail with the liveness timeout within the bound. */
    private void stopPeerAndExpectSilence(CompletableFuture<?> call, String what) throws Exception {
        peer.signal("STOP");
        long stopped = System.nanoTime();
        ExecutionException e = assertThrows(ExecutionException.class,
                () -> call.get(DETECT_SECONDS, TimeUnit.SECONDS));
        long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - stopped);
        SocketTimeoutException timeout = assertInstanceOf(SocketTimeoutException.class, e.getCause().getCause(),
                e.toString());
        assertTrue(timeout.getMessage().contains("sent nothing for 2s (liveness)"), timeout.getMessage());
        LOG.info("{} failed {} ms after SIGSTOP: {}", what, millis, timeout.getMessage());
        peer.signal("CONT");
    }

    @Test
    public void blockedReadFailsWhenTheIdlePeerIsStopped() throws Exception {
        try (Communicator server = Communicators.serve(serverUri + "&acceptTimeout=30s" + LIVENESS)) {
            peer = PeerProcess.start("sink", server);
            try (Communicator survivor = server.accept()) {
                peer.expect("CONNECTED");
                CompletableFuture<Long> reader = PeerProcess.readUntilFailure(survivor, "stopped");
                assertThrows(TimeoutException.class, () -> reader.get(ALIVE_MILLIS, TimeUnit.MILLISECONDS),
                        "heartbeats keep a connection to an idle peer up");
                stopPeerAndExpectSilence(reader, "read");
            }
        }
    }

    @Test
    public void readFailsWhenTheWritingPeerIsStopped() throws Exception {
        try (Communicator server = Communicators.serve(serverUri + "&acceptTimeout=30s" + LIVENESS)) {
            peer = PeerProcess.start("write", server);
            try (Communicator survivor = server.accept()) {
                CompletableFuture<Long> reader = PeerProcess.readUntilFailure(survivor, "stopped");
                peer.expect("STREAMING");
                stopPeerAndExpectSilence(reader, "read of a stream");
            }
        }
    }

    @Test
    public void blockedWriteAndSyncFailWhenThePeerIsStopped() throws Exception {
        try (Communicator server = Communicators.serve(serverUri + "&acceptTimeout=30s" + smallWindow() + LIVENESS)) {
            peer = PeerProcess.start("sink", server);
            try (Communicator survivor = server.accept()) {
                peer.expect("CONNECTED");
                CompletableFuture<Void> writer = PeerProcess.writeUntilFailure(survivor);
                // the peer never reads: the writer blocks, and neither side is failed while both are alive
                assertThrows(TimeoutException.class, () -> writer.get(ALIVE_MILLIS, TimeUnit.MILLISECONDS),
                        "a live peer that does not read is not failed");
                stopPeerAndExpectSilence(writer, "write");
            }
        }
    }

    @Test
    public void writeToAStoppedPeerEndsAfterTheReadTimeout() throws Exception {
        try (Communicator server = Communicators.serve(serverUri + "&acceptTimeout=30s&liveness=0&readTimeout=2s"
                + smallWindow())) {
            peer = PeerProcess.start("sink", server);
            try (Communicator survivor = server.accept()) {
                peer.expect("CONNECTED");
                peer.signal("STOP");
                long stopped = System.nanoTime();
                // the first bytes may find room (socket buffers, ring credit) or wait on the transport's answer
                CompletableFuture<Void> writer = PeerProcess.writeUntilFailure(survivor);
                ExecutionException e = assertThrows(ExecutionException.class,
                        () -> writer.get(DETECT_SECONDS, TimeUnit.SECONDS), "only readTimeout can end this write");
                long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - stopped);
                SocketTimeoutException timeout = assertInstanceOf(SocketTimeoutException.class,
                        e.getCause().getCause(), e.toString());
                assertTrue(timeout.getMessage().contains("readTimeout"), timeout.getMessage());
                LOG.info("write to a stopped peer failed {} ms after SIGSTOP: {}", millis, timeout.getMessage());
                peer.signal("CONT");
            }
        }
    }
}
