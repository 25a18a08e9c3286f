package io.rdmacomm.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.Communicators;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Timeout;

/**
 * A tcp:// server's accept-side handshake on arbitrary first bytes from a client that then stops sending, over a
 * real loopback connection: a valid hello (magic, version 1, no authentication flag, heartbeat bits or not, as
 * {@link Handshake} lays it out) is answered OK and accepted; anything else (garbage, another version, a short hello, a client that offers
 * a secret this server lacks) is hung up on without reaching the application, and the server goes on accepting.
 * Regression inputs: {@code src/test/resources/io/rdmacomm/tcp/TcpHandshakeFuzzTestInputs/}.
 */
@Timeout(120)
class TcpHandshakeFuzzTest {
    private static Communicator server;
    private static final ExecutorService ACCEPTOR = Executors.newSingleThreadExecutor();
    private static final BlockingQueue<Communicator> ACCEPTED = new LinkedBlockingQueue<>();

    @BeforeAll
    static void serve() throws IOException {
        server = Communicators.serve("tcp://127.0.0.1:0?handshakeTimeout=10s");
        ACCEPTOR.execute(() -> {
            try {
                for (;;) {
                    ACCEPTED.add(server.accept());
                }
            } catch (IOException e) {
                // the server closed at the end
            }
        });
    }

    @AfterAll
    static void stop() throws Exception {
        server.close();
        ACCEPTOR.shutdownNow();
        ACCEPTOR.awaitTermination(10, TimeUnit.SECONDS);
    }

    private static boolean valid(byte[] hello) {
        if (hello.length < Handshake.LENGTH) {
            return false;
        }
        ByteBuffer b = ByteBuffer.wrap(hello);
        return b.getInt(0) == Handshake.MAGIC && b.getShort(4) == Handshake.VERSION
                && (b.getShort(6) & Handshake.FLAG_AUTH) == 0;
    }

    @FuzzTest(maxDuration = "30s")
    void hello(byte[] input) throws Exception {
        try (SocketChannel raw = Raw.connect(server.endpoint().port())) {
            Raw.writeAll(raw, ByteBuffer.wrap(input));
            raw.shutdownOutput();
            if (valid(input)) {
                ByteBuffer reply = Raw.readExactly(raw, Handshake.LENGTH);
                short status = reply.getShort(Handshake.FLAGS_OFFSET);
                assertEquals(Handshake.STATUS_OK, status & Handshake.STATUS_MASK, "the server's status");
                // the server has liveness on (the default): it answers heartbeats exactly when the client asked
                assertEquals(Handshake.heartbeatPeriod(ByteBuffer.wrap(input).getShort(Handshake.FLAGS_OFFSET)) > 0,
                        Handshake.heartbeatPeriod(status) > 0, "heartbeat bits in the answer");
                Communicator peer = ACCEPTED.poll(20, TimeUnit.SECONDS);
                assertNotNull(peer, "a valid hello is accepted");
                peer.close();
            } else {
                raw.socket().setSoTimeout(20_000);
                InputStream in = raw.socket().getInputStream();
                byte[] b = new byte[64];
                while (in.read(b) >= 0) {
                    // the answer (a status, where the client spoke our protocol) until the server hangs up
                }
                assertNull(ACCEPTED.poll(), "a refused hello never reaches the application");
            }
        }
    }
}
