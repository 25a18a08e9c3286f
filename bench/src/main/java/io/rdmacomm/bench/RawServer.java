package io.rdmacomm.bench;

import java.io.IOException;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The server side of the raw NIO baseline: the least a hand-written Java socket server does to echo or sink.
 * One thread per connection, {@code TCP_NODELAY}, direct buffers; echo connections either block or spin on a
 * non-blocking socket, as the client asked. Other connections keep being served when one fails.
 */
final class RawServer implements ServeHarness.Server, AutoCloseable {
    /**
     * The default sink read size, the fastest measured here (64k beat 256k and 1m on loopback: a read buffer that
     * stays in the core's cache costs less than the extra system calls).
     */
    static final int DEFAULT_SINK_BUFFER = 64 << 10;
    static final int ECHO_BUFFER = 64 << 10;

    private final ServerSocketChannel listener;
    private final PrintStream log;
    private final int sinkBuffer;
    private final Thread acceptor;
    private final Set<SocketChannel> connections = ConcurrentHashMap.newKeySet();
    private final Set<Thread> threads = ConcurrentHashMap.newKeySet();
    private final AtomicInteger count = new AtomicInteger();
    private final CountDownLatch closed = new CountDownLatch(1);
    private volatile boolean closing;

    private RawServer(ServerSocketChannel listener, PrintStream log, int sinkBuffer) {
        this.listener = listener;
        this.log = log;
        this.sinkBuffer = sinkBuffer;
        this.acceptor = new Thread(this::acceptLoop, "rdmacomm-bench-raw-accept");
        acceptor.start();
    }

    /** Binds {@code address} (port 0 picks one) and starts serving; sinks read {@code sinkBuffer} bytes at most. */
    static RawServer start(InetSocketAddress address, PrintStream log, int sinkBuffer) throws IOException {
        if (sinkBuffer < 1) {
            throw new IllegalArgumentException("sink buffer must be at least 1 byte, got " + sinkBuffer);
        }
        ServerSocketChannel ch = ServerSocketChannel.open();
        try {
            ch.bind(address);
        } catch (IOException e) {
            ch.close();
            throw new IOException("cannot listen on " + address + ": " + e.getMessage(), e);
        }
        return new RawServer(ch, log, sinkBuffer);
    }

    /** The address actually bound. */
    InetSocketAddress address() throws IOException {
        return (InetSocketAddress) listener.getLocalAddress();
    }

    @Override
    public int port() {
        return listener.socket().getLocalPort();
    }

    /** Waits until the server is closed: its own threads serve. */
    @Override
    public void run() {
        try {
            closed.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public void stop() {
        try {
            close();
        } catch (IOException e) {
            log.println("raw-serve: closing failed: " + e.getMessage());
        }
    }

    private void acceptLoop() {
        try {
            while (!closing) {
                SocketChannel ch = listener.accept();
                connections.add(ch);
                Thread t = new Thread(() -> serve(ch), "rdmacomm-bench-raw-session-" + count.incrementAndGet());
                // a session thread stays in the set until it has ended, so close() joins every one still running
                threads.removeIf(ended -> !ended.isAlive());
                threads.add(t);
                t.start();
            }
        } catch (ClosedChannelException e) {
            // closed by close()
        } catch (IOException e) {
            if (!closing) {
                log.println("raw-serve: accept failed: " + e.getMessage());
            }
        }
    }

    private void serve(SocketChannel ch) {
        String peer = "unknown peer";
        try (ch) {
            peer = String.valueOf(ch.getRemoteAddress());
            ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
            ByteBuffer hello = ByteBuffer.allocate(RawProtocol.HELLO_LENGTH);
            RawProtocol.readFully(ch, hello, peer);
            hello.flip();
            int magic = hello.getInt();
            int version = Short.toUnsignedInt(hello.getShort());
            int kindId = Short.toUnsignedInt(hello.getShort());
            long total = hello.getLong();
            RawProtocol.Kind kind = RawProtocol.Kind.byId(kindId).orElse(null);
            if (magic != RawProtocol.HELLO_MAGIC || version != RawProtocol.VERSION || kind == null || total < 0) {
                // logged first: once the client has the answer, the log says why
                log.printf("raw-serve: refused %s: expected magic 0x%08x version %d and a known kind, got magic"
                        + " 0x%08x version %d kind %d total %d%n", peer, RawProtocol.HELLO_MAGIC,
                        RawProtocol.VERSION, magic, version, kindId, total);
                RawProtocol.writeFully(ch, RawProtocol.answer(RawProtocol.STATUS_REFUSED));
                return;
            }
            RawProtocol.writeFully(ch, RawProtocol.answer(RawProtocol.STATUS_OK));
            switch (kind) {
                case ECHO_BLOCKING -> echoBlocking(ch);
                case ECHO_BUSY_POLL -> echoBusyPoll(ch);
                case SINK -> sink(ch, total, peer, sinkBuffer);
            }
        } catch (IOException e) {
            if (!closing) {
                log.println("raw-serve: connection from " + peer + " failed: " + e);
            }
        } finally {
            connections.remove(ch);
        }
    }

    private static void echoBlocking(SocketChannel ch) throws IOException {
        ByteBuffer buf = ByteBuffer.allocateDirect(ECHO_BUFFER);
        while (ch.read(buf) >= 0) {
            buf.flip();
            RawProtocol.writeFully(ch, buf);
            buf.clear();
        }
    }

    private static void echoBusyPoll(SocketChannel ch) throws IOException {
        ch.configureBlocking(false);
        ByteBuffer buf = ByteBuffer.allocateDirect(ECHO_BUFFER);
        while (true) {
            int n = ch.read(buf);
            if (n < 0) {
                return;
            }
            if (n == 0) {
                Thread.onSpinWait();
                continue;
            }
            buf.flip();
            while (buf.hasRemaining()) {
                if (ch.write(buf) == 0) {
                    Thread.onSpinWait();
                }
            }
            buf.clear();
        }
    }

    private static void sink(SocketChannel ch, long total, String peer, int size) throws IOException {
        ByteBuffer buf = ByteBuffer.allocateDirect(size);
        long received = 0;
        while (received < total) {
            buf.clear();
            if (total - received < buf.capacity()) {
                buf.limit((int) (total - received));
            }
            int n = ch.read(buf);
            if (n < 0) {
                throw new IOException("sink stream from " + peer + " ended after " + received + " of " + total
                        + " bytes");
            }
            received += n;
        }
        RawProtocol.writeFully(ch, ByteBuffer.allocate(Long.BYTES).putLong(0, received));
        buf.clear();
        while (ch.read(buf) >= 0) {
            buf.clear();
        }
    }

    /** Stops accepting, closes every connection and waits (bounded) for the server's threads to end. */
    @Override
    public void close() throws IOException {
        closing = true;
        try {
            listener.close();
            for (SocketChannel ch : List.copyOf(connections)) {
                ch.close();
            }
            acceptor.join(TimeUnit.SECONDS.toMillis(5));
            for (Thread t : List.copyOf(threads)) {
                t.join(TimeUnit.SECONDS.toMillis(5));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            closed.countDown();
        }
    }
}
