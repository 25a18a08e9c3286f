package io.rdmacomm.gvirtus;

import static io.rdmacomm.gvirtus.ScriptedPeer.hex;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.rdmacomm.api.Communicators;
import java.io.EOFException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Our frontend and backend on {@code tcp://…?wire=raw} against plain sockets playing a GVirtuS peer with the bytes
 * captured between a real GVirtuS frontend and backend: nothing but those bytes crosses the socket either way.
 */
@Timeout(30)
class PlainSocketPeerTest {

    private static byte[] readExactly(SocketChannel c, int n) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(n);
        while (b.hasRemaining()) {
            if (c.read(b) < 0) {
                throw new EOFException(b.position() + " of " + n + " bytes arrived");
            }
        }
        return b.array();
    }

    private static void writeAll(SocketChannel c, byte[] bytes) throws IOException {
        ByteBuffer b = ByteBuffer.wrap(bytes);
        while (b.hasRemaining()) {
            c.write(b);
        }
    }

    @Test
    void aPlainSocketFrontendGetsTheRealBackendsReplyFromOurBackend() throws Exception {
        try (GVirtuSBackend backend = GVirtuSBackend.builder().registerAll(BuiltinRoutines.all())
                .start(Communicators.serve("tcp://127.0.0.1:0?wire=raw"));
                SocketChannel frontend = SocketChannel.open(
                        new InetSocketAddress("127.0.0.1", backend.endpoint().port()))) {
            writeAll(frontend, hex(FramingTest.ECHO_REQUEST));
            byte[] reply = readExactly(frontend, FramingTest.ECHO_REPLY.length() / 2);
            Arrays.fill(reply, 4, 12, (byte) 0); // elapsed seconds
            assertEquals(FramingTest.ECHO_REPLY, HexFormat.of().formatHex(reply));
            frontend.shutdownOutput();
            assertEquals(-1, frontend.read(ByteBuffer.allocate(1)), "the backend closes once the frontend has");
        }
    }

    @Test
    void ourFrontendSendsExactlyTheRealFrontendsRequestToAPlainSocketBackend() throws Exception {
        byte[] request = hex(FramingTest.ECHO_REQUEST);
        try (ServerSocketChannel listener = ServerSocketChannel.open().bind(new InetSocketAddress("127.0.0.1", 0))) {
            int port = ((InetSocketAddress) listener.getLocalAddress()).getPort();
            CompletableFuture<byte[]> seen = CompletableFuture.supplyAsync(() -> {
                try (SocketChannel backend = listener.accept()) {
                    byte[] got = readExactly(backend, request.length);
                    writeAll(backend, hex(FramingTest.ECHO_REPLY));
                    return got;
                } catch (IOException e) {
                    throw new IllegalStateException(e);
                }
            });
            try (GVirtuSFrontend f = GVirtuSFrontend.connect("tcp://127.0.0.1:" + port + "?wire=raw")) {
                GVirtuSResult r = f.execute("echo", GVirtuSBuffer.create().addPointer("hello".getBytes()));
                assertEquals(0, r.exitCode());
                assertArrayEquals("hello".getBytes(), r.outputBuffer().getPointer());
            }
            assertArrayEquals(request, seen.get(10, TimeUnit.SECONDS));
        }
    }
}
