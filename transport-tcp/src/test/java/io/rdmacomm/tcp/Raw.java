package io.rdmacomm.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.EOFException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;

/** Plain sockets that speak (or deliberately do not speak) the wire format by hand. */
final class Raw {
    private Raw() {
    }

    static ServerSocketChannel listen() throws IOException {
        return ServerSocketChannel.open().bind(new InetSocketAddress("127.0.0.1", 0));
    }

    static int port(ServerSocketChannel s) throws IOException {
        return ((InetSocketAddress) s.getLocalAddress()).getPort();
    }

    static SocketChannel connect(int port) throws IOException {
        return SocketChannel.open(new InetSocketAddress("127.0.0.1", port));
    }

    static ByteBuffer readExactly(SocketChannel c, int n) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(n);
        while (b.hasRemaining()) {
            if (c.read(b) < 0) {
                throw new EOFException("raw peer: end of stream after " + b.position() + " of " + n + " bytes");
            }
        }
        return b.flip();
    }

    static void writeAll(SocketChannel c, ByteBuffer b) throws IOException {
        while (b.hasRemaining()) {
            c.write(b);
        }
    }

    static ByteBuffer hello(int magic, int version, int flagsOrStatus) {
        return ByteBuffer.allocate(8).putInt(magic).putShort((short) version).putShort((short) flagsOrStatus).flip();
    }

    /** Plays the server side of the handshake: checks the client's hello and accepts it. */
    static void answerHandshake(SocketChannel c) throws IOException {
        ByteBuffer in = readExactly(c, 8);
        assertEquals(Handshake.MAGIC, in.getInt(), "client magic");
        assertEquals(Handshake.VERSION, in.getShort(), "client version");
        writeAll(c, hello(Handshake.MAGIC, Handshake.VERSION, Handshake.STATUS_OK));
    }

    /** Plays the client side of the handshake and checks the server accepted it. */
    static SocketChannel connectAndHandshake(int port) throws IOException {
        SocketChannel c = connect(port);
        writeAll(c, hello(Handshake.MAGIC, Handshake.VERSION, 0));
        ByteBuffer reply = readExactly(c, 8);
        assertEquals(Handshake.MAGIC, reply.getInt(), "server magic");
        assertEquals(Handshake.VERSION, reply.getShort(), "server version");
        assertEquals(Handshake.STATUS_OK, reply.getShort(), "server status");
        return c;
    }

    static ByteBuffer frame(byte type, byte[] payload) {
        return ByteBuffer.allocate(Wire.HEADER_LENGTH + payload.length).put(type).putInt(payload.length).put(payload)
                .flip();
    }

    /** Reads one frame header and payload; returns the payload, checking the type. */
    static byte[] readFrame(SocketChannel c, byte expectedType) throws IOException {
        ByteBuffer h = readExactly(c, Wire.HEADER_LENGTH);
        assertEquals(expectedType, h.get(), "frame type");
        int length = h.getInt();
        return readExactly(c, length).array();
    }

    /** Reads until end of stream or failure; true if the peer hung up. */
    static boolean hungUp(SocketChannel c) {
        ByteBuffer b = ByteBuffer.allocate(4096);
        try {
            while (c.read(b.clear()) >= 0) {
                // discard whatever the peer answers before hanging up
            }
            return true;
        } catch (IOException e) {
            return true;
        }
    }
}
