package io.rdmacomm.tcp;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmacomm.api.Access;
import io.rdmacomm.api.Communicator;
import io.rdmacomm.api.Communicators;
import io.rdmacomm.api.RegionDescriptor;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code wire=raw} against plain sockets: exactly the application's bytes travel, in both roles, with nothing
 * before them (no handshake) and nothing around them (no frames), as a GVirtuS {@code TcpCommunicator} expects.
 */
@Timeout(30)
class RawWireTest {
    private final ExecutorService helper = Executors.newCachedThreadPool();

    @AfterEach
    void stopHelper() throws InterruptedException {
        helper.shutdownNow();
        assertTrue(helper.awaitTermination(10, TimeUnit.SECONDS));
    }

    /** A GVirtuS request for cudaGetDeviceCount with an empty input, written by hand. */
    private static final byte[] REQUEST = concat("cudaGetDeviceCount\0".getBytes(StandardCharsets.US_ASCII),
            new byte[] {0, 0, 0, 0, 0, 0, 0, 0});

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] r = new byte[a.length + b.length];
        System.arraycopy(a, 0, r, 0, a.length);
        System.arraycopy(b, 0, r, a.length, b.length);
        return r;
    }

    /** Everything a raw peer receives until the end of the stream. */
    private static byte[] readToEnd(SocketChannel c) throws Exception {
        ByteBuffer b = ByteBuffer.allocate(1 << 16);
        while (c.read(b) >= 0) {
            assertTrue(b.hasRemaining(), "more bytes than expected");
        }
        byte[] r = new byte[b.flip().remaining()];
        b.get(r);
        return r;
    }

    @Test
    void asAClientItSendsOnlyTheApplicationsBytesAndReadsTheRawReply() throws Exception {
        try (ServerSocketChannel listener = Raw.listen()) {
            Communicator client = Communicators.connect("tcp://127.0.0.1:" + Raw.port(listener) + "?wire=raw");
            try (SocketChannel peer = listener.accept()) {
                client.write(ByteBuffer.wrap(REQUEST));
                client.sync();
                assertArrayEquals(REQUEST, Raw.readExactly(peer, REQUEST.length).array());

                ByteBuffer reply = ByteBuffer.allocate(4 + 8 + 8 + 4).order(ByteOrder.LITTLE_ENDIAN)
                        .putInt(0).putDouble(0.25).putLong(4).putInt(1).flip();
                byte[] expected = reply.array().clone();
                Raw.writeAll(peer, reply);
                ByteBuffer got = ByteBuffer.allocate(expected.length);
                client.readFully(got);
                assertArrayEquals(expected, got.array());

                client.close();
                assertEquals(0, readToEnd(peer).length, "bytes after the request: a frame or trailer");
            }
        }
    }

    @Test
    void asAServerItNeverSpeaksFirstAndReadsMinusOneWhenThePeerEndsTheStream() throws Exception {
        try (Communicator server = Communicators.serve("tcp://127.0.0.1:0?wire=raw")) {
            Future<Communicator> accepting = helper.submit(server::accept);
            try (SocketChannel peer = Raw.connect(server.endpoint().port());
                    Communicator accepted = accepting.get(10, TimeUnit.SECONDS)) {
                Raw.writeAll(peer, ByteBuffer.wrap(REQUEST));
                ByteBuffer got = ByteBuffer.allocate(REQUEST.length);
                accepted.readFully(got);
                assertArrayEquals(REQUEST, got.array(), "the peer's first bytes reach the application untouched");

                peer.configureBlocking(false);
                assertEquals(0, peer.read(ByteBuffer.allocate(1)), "the server sent something of its own");

                accepted.write(ByteBuffer.wrap(new byte[] {1, 2, 3}));
                accepted.sync();
                peer.configureBlocking(true);
                assertArrayEquals(new byte[] {1, 2, 3}, Raw.readExactly(peer, 3).array());

                peer.shutdownOutput();
                assertEquals(-1, accepted.read(ByteBuffer.allocate(8)));
                assertEquals(-1, accepted.read(ByteBuffer.allocate(8)), "end of stream stays end of stream");
            }
        }
    }

    @Test
    void closeDeliversUnsyncedBytesThenEndsTheStream() throws Exception {
        try (ServerSocketChannel listener = Raw.listen()) {
            Communicator client = Communicators.connect("tcp://127.0.0.1:" + Raw.port(listener) + "?wire=raw");
            try (SocketChannel peer = listener.accept()) {
                client.write(ByteBuffer.wrap(REQUEST));
                client.close();
                assertArrayEquals(REQUEST, readToEnd(peer));
            }
        }
    }

    @Test
    void aWriteLargerThanTheSendBufferArrivesWholeAfterWhatWasBuffered() throws Exception {
        try (ServerSocketChannel listener = Raw.listen()) {
            Communicator client = Communicators.connect("tcp://127.0.0.1:" + Raw.port(listener)
                    + "?wire=raw&sendBuffer=1k");
            try (SocketChannel peer = listener.accept()) {
                byte[] big = new byte[5000];
                for (int i = 0; i < big.length; i++) {
                    big[i] = (byte) (i * 7);
                }
                client.write(ByteBuffer.wrap(REQUEST));
                client.write(ByteBuffer.wrap(big));
                client.close();
                assertArrayEquals(concat(REQUEST, big), readToEnd(peer));
            }
        }
    }

    @Test
    void remoteMemoryIsRefusedNamingWireRaw() throws Exception {
        try (Communicator server = Communicators.serve("tcp://127.0.0.1:0?wire=raw")) {
            Future<Communicator> accepting = helper.submit(server::accept);
            try (Communicator client = Communicators.connect("tcp://127.0.0.1:" + server.endpoint().port()
                    + "?wire=raw"); Communicator accepted = accepting.get(10, TimeUnit.SECONDS)) {
                RegionDescriptor someone = new RegionDescriptor(1, 64, Set.of(Access.REMOTE_READ), new byte[] {1});
                for (Throwable t : new Throwable[] {
                        assertThrows(UnsupportedOperationException.class,
                                () -> client.register(ByteBuffer.allocateDirect(64), Set.of(Access.REMOTE_READ))),
                        assertThrows(UnsupportedOperationException.class,
                                () -> client.put(ByteBuffer.allocate(8), someone, 0)),
                        assertThrows(UnsupportedOperationException.class,
                                () -> accepted.get(someone, 0, ByteBuffer.allocate(8)))}) {
                    assertTrue(t.getMessage().contains("wire=raw"), t.getMessage());
                }
                client.write(ByteBuffer.wrap(new byte[] {9}));
                client.sync();
                ByteBuffer one = ByteBuffer.allocate(1);
                accepted.readFully(one);
                assertEquals(9, one.get(0), "the stream is intact after refused remote-memory calls");
            }
        }
    }

    @Test
    void readTimeoutAndBusyPollingKeepTheirMeaning() throws Exception {
        try (Communicator server = Communicators.serve("tcp://127.0.0.1:0?wire=raw")) {
            Future<Communicator> accepting = helper.submit(server::accept);
            try (Communicator client = Communicators.connect("tcp://127.0.0.1:" + server.endpoint().port()
                    + "?wire=raw&readTimeout=200ms&busyPoll=1ms");
                    Communicator accepted = accepting.get(10, TimeUnit.SECONDS)) {
                SocketTimeoutException e = assertThrows(SocketTimeoutException.class,
                        () -> client.read(ByteBuffer.allocate(1)));
                assertTrue(e.getMessage().contains("readTimeout"), e.getMessage());
                accepted.write(ByteBuffer.wrap(new byte[] {5}));
                accepted.sync();
                ByteBuffer one = ByteBuffer.allocate(1);
                client.readFully(one);
                assertEquals(5, one.get(0), "the connection is usable after a read timed out");
            }
        }
    }

    @Test
    void acceptTimeoutKeepsItsMeaning() throws Exception {
        try (Communicator server = Communicators.serve("tcp://127.0.0.1:0?wire=raw&acceptTimeout=200ms")) {
            SocketTimeoutException e = assertThrows(SocketTimeoutException.class, server::accept);
            assertTrue(e.getMessage().contains("acceptTimeout"), e.getMessage());
        }
    }

    @Test
    void theProviderOpensTheRawCommunicatorOnlyForWireRaw() throws Exception {
        try (Communicator raw = Communicators.open("tcp://127.0.0.1:1?wire=raw");
                Communicator framed = Communicators.open("tcp://127.0.0.1:1?wire=framed");
                Communicator plain = Communicators.open("tcp://127.0.0.1:1")) {
            assertInstanceOf(RawTcpCommunicator.class, raw);
            assertInstanceOf(TcpCommunicator.class, framed);
            assertInstanceOf(TcpCommunicator.class, plain);
        }
    }
}
