package io.rdmacomm.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.Communicators;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.IntFunction;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * liveness: heartbeats keep idle connections up, a peer that asked for heartbeats and then goes silent fails the
 * blocked calls, and a peer that never asked (an older version) is never failed for its silence.
 */
@Timeout(60)
class LivenessTest {
    private static final String LIVENESS = "liveness=300ms";
    /** Generous: the silence is noticed within liveness plus a check period; the machine may be loaded. */
    private static final long BOUND_SECONDS = 10;
    private final ExecutorService helper = Executors.newCachedThreadPool();

    @AfterEach
    void stopHelper() throws InterruptedException {
        helper.shutdownNow();
        assertTrue(helper.awaitTermination(10, TimeUnit.SECONDS));
    }

    /** Plays a server that asks for heartbeats every 100 ms (and promises its own), then says nothing more. */
    private static SocketChannel acceptAndGoSilent(ServerSocketChannel listener) throws Exception {
        SocketChannel c = listener.accept();
        ByteBuffer in = Raw.readExactly(c, Handshake.LENGTH);
        short flags = in.getShort(Handshake.FLAGS_OFFSET);
        assertTrue(Handshake.heartbeatPeriod(flags) > 0, "a client with liveness asks for heartbeats");
        Raw.writeAll(c, Raw.hello(Handshake.MAGIC, Handshake.VERSION,
                Handshake.STATUS_OK | Handshake.heartbeatBits(TimeUnit.MILLISECONDS.toNanos(100))));
        return c;
    }

    private static void assertSilenceFailure(Future<?> call) {
        ExecutionException e = assertThrows(ExecutionException.class, () -> call.get(BOUND_SECONDS, TimeUnit.SECONDS));
        SocketTimeoutException cause = assertInstanceOf(SocketTimeoutException.class, e.getCause(), e.toString());
        assertTrue(cause.getMessage().contains("sent nothing for 300ms (liveness)"), cause.getMessage());
    }

    @Test
    void aBlockedReadFailsWhenThePeerGoesSilentAndTheClientSentHeartbeats() throws Exception {
        try (ServerSocketChannel listener = Raw.listen()) {
            Future<SocketChannel> peer = helper.submit(() -> acceptAndGoSilent(listener));
            try (Communicator client = Communicators.connect("tcp://127.0.0.1:" + Raw.port(listener) + "?" + LIVENESS);
                    SocketChannel raw = peer.get(10, TimeUnit.SECONDS)) {
                Future<Integer> read = helper.submit(() -> client.read(ByteBuffer.allocate(16)));
                assertEquals(0, Raw.readFrame(raw, Wire.HEARTBEAT).length, "the idle client sends heartbeats");
                assertSilenceFailure(read);
                SocketTimeoutException again = assertThrows(SocketTimeoutException.class,
                        () -> client.write(ByteBuffer.allocate(1)));
                assertTrue(again.getMessage().contains("(liveness)"), "later calls name the silence too");
            }
        }
    }

    @Test
    void aWriteBlockedOnASilentPeerFails() throws Exception {
        try (ServerSocketChannel listener = Raw.listen()) {
            Future<SocketChannel> peer = helper.submit(() -> acceptAndGoSilent(listener));
            try (Communicator client = Communicators.connect("tcp://127.0.0.1:" + Raw.port(listener) + "?" + LIVENESS);
                    SocketChannel raw = peer.get(10, TimeUnit.SECONDS)) {
                Future<?> writer = helper.submit(() -> {
                    ByteBuffer chunk = ByteBuffer.allocate(1 << 20);
                    while (true) {
                        client.write(chunk.clear());
                        client.sync();
                    }
                });
                assertSilenceFailure(writer);
                assertTrue(raw.isOpen());
            }
        }
    }

    @Test
    void theServerFailsASilentClientsBlockedRead() throws Exception {
        try (Communicator server = Communicators.serve("tcp://127.0.0.1:0?" + LIVENESS);
                SocketChannel raw = Raw.connect(server.endpoint().port())) {
            Raw.writeAll(raw, Raw.hello(Handshake.MAGIC, Handshake.VERSION,
                    Handshake.heartbeatBits(TimeUnit.MILLISECONDS.toNanos(100))));
            ByteBuffer reply = Raw.readExactly(raw, Handshake.LENGTH);
            assertEquals(Handshake.STATUS_OK, reply.getShort(Handshake.FLAGS_OFFSET) & Handshake.STATUS_MASK);
            assertEquals(64, TimeUnit.NANOSECONDS.toMillis(Handshake.heartbeatPeriod(
                    reply.getShort(Handshake.FLAGS_OFFSET))), "a third of the server's 300ms, rounded down to 2^n ms");
            try (Communicator accepted = server.accept()) {
                assertSilenceFailure(helper.submit(() -> accepted.read(ByteBuffer.allocate(16))));
            }
        }
    }

    @Test
    void heartbeatsKeepAnIdleConnectionUp() throws Exception {
        assertHeartbeatsKeepUp("tcp://127.0.0.1:0?" + LIVENESS, port -> "tcp://127.0.0.1:" + port + "?" + LIVENESS);
    }

    @Test
    void heartbeatsKeepAnIdleTlsConnectionUp() throws Exception {
        TestPki pki = TestPki.get();
        assertHeartbeatsKeepUp(pki.serverUri(LIVENESS), port -> pki.clientUri(port, LIVENESS));
    }

    private void assertHeartbeatsKeepUp(String serverUri, IntFunction<String> clientUri) throws Exception {
        try (Communicator server = Communicators.serve(serverUri);
                Communicator client = Communicators.connect(clientUri.apply(server.endpoint().port()));
                Communicator accepted = server.accept()) {
            Future<Integer> read = helper.submit(() -> accepted.read(ByteBuffer.allocate(16)));
            // both sides idle for five times the liveness: only heartbeats cross (inside TLS where it is on)
            assertThrows(TimeoutException.class, () -> read.get(1500, TimeUnit.MILLISECONDS));
            client.write(ByteBuffer.wrap(new byte[] {42}));
            client.sync();
            assertEquals(1, read.get(BOUND_SECONDS, TimeUnit.SECONDS));
        }
    }

    @Test
    void aPeerThatDidNotAskForHeartbeatsIsNeverFailedForSilence() throws Exception {
        try (ServerSocketChannel listener = Raw.listen()) {
            Future<SocketChannel> peer = helper.submit(() -> {
                SocketChannel c = listener.accept();
                Raw.answerHandshake(c); // a server of the version before heartbeats: plain status 0
                return c;
            });
            try (Communicator client = Communicators.connect("tcp://127.0.0.1:" + Raw.port(listener) + "?" + LIVENESS);
                    SocketChannel raw = peer.get(10, TimeUnit.SECONDS)) {
                Future<Integer> read = helper.submit(() -> client.read(ByteBuffer.allocate(16)));
                assertThrows(TimeoutException.class, () -> read.get(1500, TimeUnit.MILLISECONDS));
                Raw.writeAll(raw, Raw.frame(Wire.DATA, new byte[] {7}));
                assertEquals(1, read.get(BOUND_SECONDS, TimeUnit.SECONDS));
                raw.configureBlocking(false);
                assertEquals(0, raw.read(ByteBuffer.allocate(16)), "no heartbeat goes to a peer that did not ask");
            }
        }
    }

    @Test
    void heartbeatCodesRoundDownToAPowerOfTwoMilliseconds() {
        assertEquals(0, Handshake.heartbeatBits(0));
        assertEquals(0, Handshake.heartbeatPeriod((short) 0));
        assertEquals(8192, TimeUnit.NANOSECONDS.toMillis(Handshake.heartbeatPeriod(
                Handshake.heartbeatBits(TimeUnit.SECONDS.toNanos(10)))));
        assertEquals(1, TimeUnit.NANOSECONDS.toMillis(Handshake.heartbeatPeriod(Handshake.heartbeatBits(1))));
        assertEquals(Handshake.STATUS_OK, Handshake.heartbeatBits(TimeUnit.DAYS.toNanos(1)) & Handshake.STATUS_MASK);
        assertFalse(Handshake.heartbeatPeriod(Handshake.heartbeatBits(TimeUnit.DAYS.toNanos(1))) == 0);
    }
}
