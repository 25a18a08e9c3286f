package io.rdmacomm.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmacomm.api.Endpoint;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.Arrays;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A TLS session's socket buffers: one record each way while the connection is idle (what a server holds for every
 * quiet client), growing to {@link TlsSession#MAX_RECORDS_BUFFERED} records, and no further, under a bulk transfer.
 */
@Timeout(120)
class TlsBuffersTest {
    private static final int BULK = 8 << 20;
    private final TestPki pki = TestPki.get();
    private final ExecutorService helper = Executors.newCachedThreadPool();

    @AfterEach
    void stop() throws Exception {
        helper.shutdownNow();
        assertTrue(helper.awaitTermination(10, TimeUnit.SECONDS));
    }

    @ParameterizedTest
    @ValueSource(strings = {"openssl", "jdk"})
    void idleSessionsHoldOneRecordEachWayAndBulkTransfersGrowThemToTheCap(String engine) throws Exception {
        String option = "tlsEngine=" + engine;
        TlsConfig serverConfig = TlsConfig.of(Endpoint.parse(pki.serverUri(option)));
        try (ServerSocketChannel listener = ServerSocketChannel.open()
                .bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0))) {
            Endpoint target = Endpoint.parse(pki.clientUri(listener.socket().getLocalPort(), option));
            TlsSession client = TlsConfig.of(target).clientSession(target, "the test server");
            try (SocketChannel c = SocketChannel.open(listener.getLocalAddress());
                    SocketChannel s = listener.accept()) {
                TlsSession server = serverConfig.serverSession("the test client");
                int[] serverIdle = new int[2];
                // the server's side in a thread of its own: its handshake (which may end only once the client's
                // first records arrive), its buffers then, and the bulk it receives
                Future<Long> received = helper.submit(() -> {
                    while (server.handshake(s) != 0) {
                        // blocking channel: each step waits for the peer
                    }
                    System.arraycopy(server.socketBufferCapacities(), 0, serverIdle, 0, 2);
                    ByteBuffer dst = ByteBuffer.allocate(64 * 1024);
                    long total = 0;
                    while (total < BULK) {
                        int n = server.read(s, dst.clear());
                        if (n < 0) {
                            break;
                        }
                        for (int i = 0; i < n; i++) {
                            if (dst.get(i) != (byte) (total + i)) {
                                throw new AssertionError("byte " + (total + i) + " differs");
                            }
                        }
                        total += n;
                    }
                    return total;
                });
                while (client.handshake(c) != 0) {
                    // as above
                }
                int packet = client.packetSize();
                int cap = packet * TlsSession.MAX_RECORDS_BUFFERED;
                assertEquals(Arrays.toString(new int[] {packet, packet}),
                        Arrays.toString(client.socketBufferCapacities()), "the client's buffers, idle");
                ByteBuffer chunk = ByteBuffer.allocate(1 << 20);
                for (int sent = 0; sent < BULK; sent += chunk.capacity()) {
                    for (int i = 0; i < chunk.capacity(); i++) {
                        chunk.put(i, (byte) (sent + i));
                    }
                    chunk.clear();
                    client.output().lock();
                    try {
                        assertTrue(client.send(c, new ByteBuffer[] {chunk}), "a blocking send takes it all");
                    } finally {
                        client.output().unlock();
                    }
                }
                assertEquals(BULK, received.get(60, TimeUnit.SECONDS), "plaintext bytes received, in order");
                assertEquals(Arrays.toString(new int[] {server.packetSize(), server.packetSize()}),
                        Arrays.toString(serverIdle), "the server's buffers after its handshake");
                assertEquals(cap, client.socketBufferCapacities()[1], "the sender's sealed-records buffer");
                int in = server.socketBufferCapacities()[0];
                assertTrue(in > server.packetSize() && in <= server.packetSize() * TlsSession.MAX_RECORDS_BUFFERED,
                        "the receiver's buffer grew, within the cap: " + in + " bytes, records of "
                                + server.packetSize());
            }
        }
    }
}
