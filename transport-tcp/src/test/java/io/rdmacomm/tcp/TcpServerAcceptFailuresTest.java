package io.rdmacomm.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.Communicators;
import io.rdmacomm.api.Endpoint;
import io.rdmacomm.api.HandshakeException;
import java.io.IOException;
import java.net.ConnectException;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The accept loops survive failing accepts (the "accept thread failed; no further peers will be accepted"):
 * a client that connects while the listener's accepts fail gets in once they succeed again. Also the listen queue the
 * servers ask for.
 */
@Timeout(60)
class TcpServerAcceptFailuresTest {
    private final ExecutorService helper = Executors.newCachedThreadPool();

    @AfterEach
    void stop() throws InterruptedException {
        helper.shutdownNow();
        assertTrue(helper.awaitTermination(10, TimeUnit.SECONDS));
    }

    private void assertFramedServerSurvives(int failures, Supplier<? extends Exception> failure) throws Exception {
        Endpoint e = Endpoint.parse("tcp://127.0.0.1:0");
        FailingListener[] failing = new FailingListener[1];
        try (TcpServer server = TcpServer.bind(e, Settings.of(e), l -> failing[0] = new FailingListener(l, failures,
                failure))) {
            Future<Communicator> client = helper.submit(() -> Communicators.connect("tcp://127.0.0.1:"
                    + server.endpoint().port() + "?connectTimeout=20s"));
            TcpServer.Accepted peer = server.accept();
            try (Communicator c = client.get(20, TimeUnit.SECONDS); SocketChannel s = peer.channel()) {
                assertEquals(failures, failing[0].failed.get(), "every injected failure was met");
                assertTrue(server.acceptFailures() >= failures, "failures counted: " + server.acceptFailures());
                c.write(ByteBuffer.wrap(new byte[] {1, 2, 3}));
                c.sync();
                s.configureBlocking(true);
                ByteBuffer got = ByteBuffer.allocate(64);
                assertTrue(s.read(got) > 0, "the client's frame reaches the accepted channel");
            }
            // and the next client too
            Future<Communicator> next = helper.submit(() -> Communicators.connect("tcp://127.0.0.1:"
                    + server.endpoint().port() + "?connectTimeout=20s"));
            TcpServer.Accepted second = server.accept();
            next.get(20, TimeUnit.SECONDS).close();
            second.channel().close();
        }
    }

    @Test
    void framedServerSurvivesFailingAcceptsOfTheKernel() throws Exception {
        assertFramedServerSurvives(5, () -> new IOException("No buffer space available"));
    }

    @Test
    void framedServerSurvivesAcceptsFailingWithAnyException() throws Exception {
        assertFramedServerSurvives(3, () -> new IllegalStateException("injected: a bug below accept"));
    }

    @Test
    void rawServerSurvivesFailingAccepts() throws Exception {
        Endpoint e = Endpoint.parse("tcp://127.0.0.1:0?wire=raw&acceptTimeout=20s");
        FailingListener[] failing = new FailingListener[1];
        try (RawServer server = RawServer.bind(e, Settings.of(e), l -> failing[0] = new FailingListener(l, 4,
                () -> new IOException("Too many open files")))) {
            try (SocketChannel client = Raw.connect(server.endpoint().port());
                    SocketChannel peer = server.accept()) {
                assertTrue(failing[0].failed.get() >= 4, "the failures were met: " + failing[0].failed.get());
                assertTrue(server.acceptFailures() >= 1);
                Raw.writeAll(client, ByteBuffer.wrap(new byte[] {9}));
                peer.configureBlocking(true);
                assertEquals(9, Raw.readExactly(peer, 1).get());
            }
        }
    }

    /** A server that takes the client's connection and hangs up, having read its hello or not. */
    private void assertClientSaysTheServerHungUpBeforeAnswering(boolean readHello) throws Exception {
        try (ServerSocketChannel listener = Raw.listen()) {
            Future<?> hangUp = helper.submit(() -> {
                try (SocketChannel c = listener.accept()) {
                    if (readHello) {
                        Raw.readExactly(c, Handshake.LENGTH);
                    } else {
                        // leave the hello unread: the close then resets the connection
                        c.setOption(java.net.StandardSocketOptions.SO_LINGER, 0);
                    }
                }
                return null;
            });
            // a reset can arrive before the client finished connecting (a ConnectException) or while it waits
            // for the answer (a HandshakeException): either names the likely reason
            IOException e = assertThrows(IOException.class, () -> Communicators.connect(
                    "tcp://127.0.0.1:" + Raw.port(listener) + "?connectTimeout=10s"));
            hangUp.get(10, TimeUnit.SECONDS);
            assertTrue(e instanceof HandshakeException || (!readHello && e instanceof ConnectException), e.toString());
            assertTrue(e.getMessage().contains("closed the connection before answering the handshake (it may be at"
                    + " its connection limit or out of file descriptors"), e.getMessage());
        }
    }

    @Test
    void clientNamesAServerThatClosedBeforeAnswering() throws Exception {
        assertClientSaysTheServerHungUpBeforeAnswering(true);
    }

    @Test
    void clientNamesAServerThatResetTheConnectionBeforeAnswering() throws Exception {
        assertClientSaysTheServerHungUpBeforeAnswering(false);
    }

    @Test
    void listenQueueIsTheBacklogOptionAtMostSomaxconn() throws Exception {
        assertEquals(4096, BoundListener.backlog(Endpoint.parse("tcp://h:1"), -1), "the default");
        assertEquals(64, BoundListener.backlog(Endpoint.parse("tcp://h:1?backlog=64"), 4096));
        assertEquals(4096, BoundListener.backlog(Endpoint.parse("tcp://h:1?backlog=100000"), 4096));
        Path somaxconn = Path.of("/proc/sys/net/core/somaxconn");
        if (Files.isReadable(somaxconn)) {
            assertEquals(Integer.parseInt(Files.readAllLines(somaxconn).get(0).trim()), BoundListener.somaxconn());
        }
    }
}
