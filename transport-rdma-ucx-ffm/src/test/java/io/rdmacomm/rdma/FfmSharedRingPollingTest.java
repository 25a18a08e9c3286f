package io.rdmacomm.rdma;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.Communicators;
import io.rdmacomm.rdma.ucx.UcxTransports;
import io.rdmacomm.rdma.ucx.ffm.FfmProvider;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The polling flag of a mapped shared ring (ucx-ffm, UCX shared memory, one process): reads that spun for their
 * bytes leave it up, so the writer of a hot exchange sends no DATA between them; a listener armed after them
 * (notifyReadable) still runs on the writer's next bytes, and a later read that parks still wakes.
 */
@Timeout(60)
class FfmSharedRingPollingTest {
    private static final String URI = "rdma://127.0.0.1:0?provider=ucx-ffm&busyPoll=10ms";
    private static final int EXCHANGES = 500;

    @Test
    void afterReadsThatSpunAListenerAndAParkedReadStillWake() throws Exception {
        assumeTrue(UcxTransports.sharedMemoryAllowed() && new FfmProvider().unavailabilityCause().isEmpty(),
                "needs UCX with shared memory");
        try (Communicator server = Communicators.serve(URI)) {
            CompletableFuture<Communicator> accepted = CompletableFuture.supplyAsync(() -> {
                try {
                    return server.accept();
                } catch (IOException e) {
                    throw new IllegalStateException(e);
                }
            });
            try (Communicator client = Communicators.connect(server.endpoint().toString());
                    Communicator peer = accepted.get(30, TimeUnit.SECONDS)) {
                assertTrue(((RdmaCommunicator) client).statistics().peerRingMapped(), "the client maps the ring");
                assertTrue(((RdmaCommunicator) peer).statistics().peerRingMapped(), "the server maps the ring");
                CountDownLatch parkNow = new CountDownLatch(1);
                CompletableFuture<Void> echo = CompletableFuture.runAsync(() -> {
                    ByteBuffer b = ByteBuffer.allocate(8);
                    try {
                        for (int i = 0; i <= EXCHANGES; i++) {
                            peer.readFully(b.clear());
                            peer.write(b.flip());
                            peer.sync();
                        }
                        // the last one after the client's read has certainly stopped spinning (10 ms) and parked
                        assertTrue(parkNow.await(30, TimeUnit.SECONDS));
                        peer.readFully(b.clear());
                        peer.write(b.flip());
                        peer.sync();
                    } catch (IOException | InterruptedException e) {
                        throw new IllegalStateException(e);
                    }
                });
                ByteBuffer b = ByteBuffer.allocate(8);
                for (long i = 0; i < EXCHANGES; i++) {
                    client.write(b.clear().putLong(0, i));
                    client.sync();
                    client.readFully(b.clear());
                    assertEquals(i, b.getLong(0), "echo " + i);
                }
                CountDownLatch told = new CountDownLatch(1);
                assertTrue(client.notifyReadable(told::countDown));
                assertEquals(1, told.getCount(), "told before the peer wrote again");
                client.write(b.clear().putLong(0, EXCHANGES));
                client.sync();
                assertTrue(told.await(10, TimeUnit.SECONDS), "the listener ran when the echo came");
                client.readFully(b.clear());
                assertEquals(EXCHANGES, b.getLong(0));
                client.write(b.clear().putLong(0, EXCHANGES + 1));
                client.sync();
                parkNow.countDown();
                client.readFully(b.clear());
                assertEquals(EXCHANGES + 1, b.getLong(0), "the echo a parked read waited for");
                echo.get(30, TimeUnit.SECONDS);
            }
        }
    }
}
