package io.rdmacomm.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.Communicators;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Connections that never send their handshake (the "128 silent connections stop a tcp:// server from
 * accepting, for good"): however many more there are than {@code maxHandshakes}, a real client gets in within its
 * connect timeout (silent peers give way to waiting ones), and none of them outlives the handshake timeout.
 */
@Timeout(60)
class SilentPeersTest {
    private static final int MAX_HANDSHAKES = 128;
    private static final int SILENT = 2 * MAX_HANDSHAKES + 3;
    private final ExecutorService helper = Executors.newCachedThreadPool();
    private final List<SocketChannel> silent = new ArrayList<>();

    @AfterEach
    void cleanUp() throws Exception {
        for (SocketChannel c : silent) {
            c.close();
        }
        helper.shutdownNow();
        assertTrue(helper.awaitTermination(10, TimeUnit.SECONDS));
    }

    private static void assertExchange(Communicator client, Communicator peer) throws Exception {
        client.write(ByteBuffer.wrap(new byte[] {7, 8, 9}));
        client.sync();
        ByteBuffer got = ByteBuffer.allocate(3);
        peer.readFully(got);
        assertEquals(ByteBuffer.wrap(new byte[] {7, 8, 9}), got.flip());
    }

    @Test
    void manySilentConnectionsDoNotKeepARealClientOut() throws Exception {
        try (Communicator server = Communicators.serve("tcp://127.0.0.1:0?handshakeTimeout=60s&maxHandshakes="
                + MAX_HANDSHAKES)) {
            for (int i = 0; i < SILENT; i++) {
                silent.add(Raw.connect(server.endpoint().port()));
            }
            Future<Communicator> accepted = helper.submit(server::accept);
            try (Communicator client = Communicators.connect("tcp://127.0.0.1:" + server.endpoint().port() + "?connectTimeout=10s");
                    Communicator peer = accepted.get(10, TimeUnit.SECONDS)) {
                assertExchange(client, peer);
            }
        }
    }

    @Test
    void silentConnectionsAreDroppedAtTheHandshakeTimeoutAndAcceptingGoesOn() throws Exception {
        try (Communicator server = Communicators.serve("tcp://127.0.0.1:0?handshakeTimeout=1s&maxHandshakes="
                + MAX_HANDSHAKES)) {
            for (int i = 0; i < SILENT; i++) {
                silent.add(Raw.connect(server.endpoint().port()));
            }
            List<Future<Boolean>> hungUp = new ArrayList<>();
            for (SocketChannel c : silent) {
                hungUp.add(helper.submit(() -> Raw.hungUp(c)));
            }
            for (Future<Boolean> f : hungUp) {
                assertTrue(f.get(20, TimeUnit.SECONDS), "every silent peer is dropped");
            }
            // the case: once the silent peers are gone, the next client must still get in
            Future<Communicator> accepted = helper.submit(server::accept);
            try (Communicator client = Communicators.connect("tcp://127.0.0.1:" + server.endpoint().port() + "?connectTimeout=10s");
                    Communicator peer = accepted.get(10, TimeUnit.SECONDS)) {
                assertExchange(client, peer);
            }
        }
    }
}
