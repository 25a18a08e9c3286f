package io.rdmacomm.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.Communicators;
import io.rdmacomm.api.Endpoint;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code maxHandshakes} with peers that are talking (sent part of their hello): none of them is dropped for a
 * newcomer, however long it waits; the newcomer waits in the listen queue and gets in once a slot frees.
 */
@Timeout(60)
class TcpServerHandshakeLimitTest {
    private static final int MAX = 4;
    private final ExecutorService helper = Executors.newCachedThreadPool();
    private final List<SocketChannel> talkers = new ArrayList<>();

    @AfterEach
    void stop() throws Exception {
        for (SocketChannel c : talkers) {
            c.close();
        }
        helper.shutdownNow();
        assertTrue(helper.awaitTermination(10, TimeUnit.SECONDS));
    }

    @Test
    void talkingPeersKeepTheirSlotsAndANewcomerWaitsForOne() throws Exception {
        Endpoint e = Endpoint.parse("tcp://127.0.0.1:0?handshakeTimeout=30s&maxHandshakes=" + MAX);
        ByteBuffer hello = Raw.hello(Handshake.MAGIC, Handshake.VERSION, 0);
        try (TcpServer server = TcpServer.bind(e, Settings.of(e))) {
            for (int i = 0; i < MAX; i++) {
                SocketChannel c = Raw.connect(server.endpoint().port());
                Raw.writeAll(c, hello.duplicate().limit(1)); // talking, but not done
                talkers.add(c);
            }
            Future<Communicator> client = helper.submit(() -> Communicators.connect("tcp://127.0.0.1:"
                    + server.endpoint().port() + "?connectTimeout=30s"));
            Future<TcpServer.Accepted> first = helper.submit(server::accept);
            long waitMillis = TimeUnit.NANOSECONDS.toMillis(TcpServer.EVICT_SILENT_AFTER_NANOS) + 1000;
            assertThrows(TimeoutException.class, () -> first.get(waitMillis, TimeUnit.MILLISECONDS),
                    "no peer may be accepted while " + MAX + " talking peers hold every slot");
            assertTrue(!client.isDone(), "the newcomer waits");
            for (SocketChannel c : talkers) {
                c.configureBlocking(false);
                assertEquals(0, c.read(ByteBuffer.allocate(8)), "a talking peer is not dropped for a newcomer");
                c.configureBlocking(true);
            }
            // the first talker completes its hello: it is accepted, and its slot lets the newcomer in
            Raw.writeAll(talkers.get(0), hello.duplicate().position(1));
            TcpServer.Accepted talker = first.get(20, TimeUnit.SECONDS);
            talker.channel().close();
            TcpServer.Accepted newcomer = server.accept();
            try (Communicator c = client.get(20, TimeUnit.SECONDS)) {
                assertTrue(c.isOpen());
            } finally {
                newcomer.channel().close();
            }
        }
    }
}
