package io.rdmacomm.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.Communicators;
import io.rdmacomm.api.HandshakeException;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Both sides of the handshake against peers that get it wrong. */
class HandshakeTest {
    private final ExecutorService helper = Executors.newCachedThreadPool();

    @AfterEach
    void stopHelper() throws InterruptedException {
        helper.shutdownNow();
        assertTrue(helper.awaitTermination(10, TimeUnit.SECONDS));
    }

    private static void assertExchange(Communicator a, Communicator b) throws Exception {
        a.write(ByteBuffer.wrap(new byte[] {1, 2, 3}));
        a.sync();
        ByteBuffer got = ByteBuffer.allocate(3);
        b.readFully(got);
        assertEquals(ByteBuffer.wrap(new byte[] {1, 2, 3}), got.flip());
    }

    @Test
    @Timeout(20)
    void garbageIsRejectedAtOnceNotAfterTheHandshakeTimeoutAndTheServerKeepsAccepting() throws Exception {
        try (Communicator server = Communicators.serve("tcp://127.0.0.1:0?handshakeTimeout=60s")) {
            Future<Communicator> accepted = helper.submit(server::accept);
            try (SocketChannel raw = Raw.connect(server.endpoint().port())) {
                Raw.writeAll(raw, ByteBuffer.wrap("HELLO?".getBytes(StandardCharsets.US_ASCII)));
                Future<Boolean> hungUp = helper.submit(() -> Raw.hungUp(raw));
                assertTrue(hungUp.get(10, TimeUnit.SECONDS), "a peer sending garbage is dropped well before 60s");
            }
            try (Communicator client = Communicators.connect(server.endpoint().toString());
                    Communicator peer = accepted.get(10, TimeUnit.SECONDS)) {
                assertExchange(client, peer);
            }
        }
    }

    @Test
    @Timeout(20)
    void anotherProtocolVersionIsRefusedWithTheServersVersion() throws Exception {
        try (Communicator server = Communicators.serve("tcp://127.0.0.1:0");
                SocketChannel raw = Raw.connect(server.endpoint().port())) {
            Raw.writeAll(raw, Raw.hello(Handshake.MAGIC, 99, 0));
            ByteBuffer reply = Raw.readExactly(raw, 8);
            assertEquals(Handshake.MAGIC, reply.getInt());
            assertEquals(Handshake.VERSION, reply.getShort(), "the server names its version");
            assertEquals(Handshake.STATUS_VERSION_REFUSED, reply.getShort());
            assertTrue(Raw.hungUp(raw));
        }
    }

    @Test
    @Timeout(20)
    void aSilentClientDoesNotDelayTheNextOneAndIsDroppedAfterTheHandshakeTimeout() throws Exception {
        // taken before the silent client connects, so the server's handshake clock starts later than ours
        long start = System.nanoTime();
        try (Communicator server = Communicators.serve("tcp://127.0.0.1:0?handshakeTimeout=3s");
                SocketChannel silent = Raw.connect(server.endpoint().port())) {
            Future<Boolean> dropped = helper.submit(() -> Raw.hungUp(silent));
            Future<Communicator> accepted = helper.submit(server::accept);
            try (Communicator client = Communicators.connect(server.endpoint().toString());
                    Communicator peer = accepted.get(10, TimeUnit.SECONDS)) {
                assertTrue(!dropped.isDone(), "the silent client was still waiting when the next one got in");
                assertExchange(client, peer);
            }
            assertTrue(dropped.get(10, TimeUnit.SECONDS));
            long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            assertTrue(millis >= 2900, "dropped after " + millis + " ms, handshakeTimeout=3s");
        }
    }

    @Test
    @Timeout(20)
    void aClientsFirstBytesGoWithItsHelloBeforeTheServerAnswersAndConnectWaitsForTheAnswer() throws Exception {
        byte[] request = "OPEN ECHO".getBytes(StandardCharsets.US_ASCII);
        try (ServerSocketChannel listener = Raw.listen();
                Communicator client = Communicators.open("tcp://127.0.0.1:" + Raw.port(listener))) {
            Future<SocketChannel> server = helper.submit(() -> {
                SocketChannel c = listener.accept();
                // the hello and the DATA frame of the request, all before the server said a word
                ByteBuffer got = Raw.readExactly(c, Handshake.LENGTH + Wire.HEADER_LENGTH + request.length);
                assertEquals(Handshake.MAGIC, got.getInt(0));
                assertEquals(Wire.DATA, got.get(Handshake.LENGTH));
                assertEquals(request.length, got.getInt(Handshake.LENGTH + 1));
                assertEquals(ByteBuffer.wrap(request), got.position(Handshake.LENGTH + Wire.HEADER_LENGTH));
                return c;
            });
            Future<?> connected = helper.submit(() -> {
                client.connect(ByteBuffer.wrap(request));
                return null;
            });
            try (SocketChannel c = server.get(10, TimeUnit.SECONDS)) {
                assertFalse(connected.isDone(), "connect(first) returned before the server answered the handshake");
                Raw.writeAll(c, Raw.hello(Handshake.MAGIC, Handshake.VERSION, Handshake.STATUS_OK));
                connected.get(10, TimeUnit.SECONDS);
                client.write(ByteBuffer.wrap(new byte[] {42}));
                client.sync();
                assertEquals(ByteBuffer.wrap(new byte[] {42}), ByteBuffer.wrap(Raw.readFrame(c, Wire.DATA)));
            }
        }
    }

    @Test
    @Timeout(20)
    void aClientRejectsAServerAnsweringGarbageNamingItAndTheBytes() throws Exception {
        try (ServerSocketChannel listener = Raw.listen()) {
            helper.submit(() -> {
                try (SocketChannel c = listener.accept()) {
                    Raw.readExactly(c, 8);
                    Raw.writeAll(c, ByteBuffer.wrap("HTTP/1.1 400".getBytes(StandardCharsets.US_ASCII)));
                    Raw.hungUp(c);
                }
                return null;
            });
            String uri = "tcp://127.0.0.1:" + Raw.port(listener);
            HandshakeException e = assertThrows(HandshakeException.class, () -> Communicators.connect(uri));
            assertTrue(e.getMessage().contains("127.0.0.1:" + Raw.port(listener)), e.getMessage());
            assertTrue(e.getMessage().contains("48 54 54 50"), "hex of what arrived: " + e.getMessage());
        }
    }

    @Test
    @Timeout(20)
    void aClientReportsTheVersionAServerRefusedWith() throws Exception {
        try (ServerSocketChannel listener = Raw.listen()) {
            helper.submit(() -> {
                try (SocketChannel c = listener.accept()) {
                    Raw.readExactly(c, 8);
                    Raw.writeAll(c, Raw.hello(Handshake.MAGIC, 7, Handshake.STATUS_VERSION_REFUSED));
                }
                return null;
            });
            HandshakeException e = assertThrows(HandshakeException.class,
                    () -> Communicators.connect("tcp://127.0.0.1:" + Raw.port(listener)));
            assertTrue(e.getMessage().contains("version 7"), e.getMessage());
        }
    }

    @Test
    @Timeout(20)
    void aServerClosingDuringTheHandshakeIsReportedWithWhatArrived() throws Exception {
        try (ServerSocketChannel listener = Raw.listen()) {
            helper.submit(() -> {
                try (SocketChannel c = listener.accept()) {
                    Raw.readExactly(c, 8);
                    Raw.writeAll(c, ByteBuffer.allocate(3).putShort((short) 0x5244).put((byte) 0x43).flip());
                }
                return null;
            });
            HandshakeException e = assertThrows(HandshakeException.class,
                    () -> Communicators.connect("tcp://127.0.0.1:" + Raw.port(listener)));
            assertTrue(e.getMessage().contains("after 3 of 8 bytes") && e.getMessage().contains("52 44 43"),
                    e.getMessage());
        }
    }
}
