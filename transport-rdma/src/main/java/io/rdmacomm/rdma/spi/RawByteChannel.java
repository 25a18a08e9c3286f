package io.rdmacomm.rdma.spi;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.InetSocketAddress;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.channels.ByteChannel;
import java.nio.channels.ClosedChannelException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A provider connection to a served rdma:// endpoint, below the engine: its writes are sent as raw control
 * messages and its reads return the control messages the server sends. For the contract kits' raw connector, which
 * sends garbage instead of the engine's HELLO; every wait is bounded (30 s for a read, 10 s for a send).
 */
public final class RawByteChannel implements ByteChannel {
    private final LinkedBlockingQueue<Object> inbox = new LinkedBlockingQueue<>();
    private final RdmaChannel channel;
    private boolean open = true;
    private ByteBuffer pending = ByteBuffer.allocate(0);

    private RawByteChannel(RdmaProvider provider, InetSocketAddress server) throws IOException {
        channel = provider.connect(server, Duration.ofSeconds(10), new ChannelHandler() {
            @Override
            public void onMessage(ByteBuffer message) {
                inbox.add(ByteBuffer.allocate(message.remaining()).put(message.duplicate()).flip());
            }

            @Override
            public void onError(IOException cause) {
                inbox.add(cause);
            }
        });
    }

    /** Connects with {@code provider} to {@code server}, within 10 seconds. */
    public static ByteChannel connect(RdmaProvider provider, InetSocketAddress server) throws IOException {
        return new RawByteChannel(provider, server);
    }

    @Override
    public int read(ByteBuffer dst) throws IOException {
        if (!open) {
            throw new ClosedChannelException();
        }
        while (!pending.hasRemaining()) {
            Object next;
            try {
                next = inbox.poll(30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new InterruptedIOException();
            }
            if (next == null) {
                throw new SocketTimeoutException("raw read: nothing within 30 s");
            }
            if (next instanceof IOException e) {
                inbox.add(e);
                return -1;
            }
            pending = (ByteBuffer) next;
        }
        int n = Math.min(dst.remaining(), pending.remaining());
        dst.put(pending.slice().limit(n));
        pending.position(pending.position() + n);
        return n;
    }

    @Override
    public int write(ByteBuffer src) throws IOException {
        int n = src.remaining();
        CompletableFuture<Void> sent = new CompletableFuture<>();
        channel.send(src.duplicate(), new Completion() {
            @Override
            public void completed() {
                sent.complete(null);
            }

            @Override
            public void failed(IOException cause) {
                sent.completeExceptionally(cause);
            }
        });
        try {
            sent.get(10, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new IOException("raw send failed: " + e, e);
        }
        src.position(src.limit());
        return n;
    }

    @Override
    public boolean isOpen() {
        return open;
    }

    @Override
    public void close() {
        open = false;
        channel.close();
    }
}
