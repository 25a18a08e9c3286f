package io.rdmacomm.rdma.ucx;

import io.rdmacomm.api.Endpoint;
import io.rdmacomm.rdma.spi.ChannelHandler;
import io.rdmacomm.rdma.spi.Completion;
import io.rdmacomm.rdma.spi.RdmaChannel;
import io.rdmacomm.testkit.TransportUnderTest;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ByteChannel;
import java.nio.channels.ClosedChannelException;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/** The contract kits' hooks for rdma:// over UCX. */
final class UcxTestHooks {
    private UcxTestHooks() {
    }

    /** The kit's transport for rdma:// with UCX, whose raw connections skip the rdmacomm handshake. */
    static TransportUnderTest transport() {
        return TransportUnderTest.of("rdma://127.0.0.1:0?provider=ucx").withRawConnector(UcxTestHooks::rawConnect);
    }

    /** Same, but only where UCX_TLS=tcp is in the environment (the surefire execution "ucx-tcp" sets it). */
    static TransportUnderTest tcpTransport() {
        return transport().withSkipReason(() -> "tcp".equals(System.getenv("UCX_TLS")) ? Optional.empty()
                : Optional.of("UCX_TLS=tcp is not set; run through the surefire execution ucx-tcp"));
    }

    /**
     * A UCX connection to a served rdma:// endpoint whose writes are sent as raw control messages and whose reads
     * return the control messages the server sends, so the kit can send garbage instead of the HELLO.
     */
    static ByteChannel rawConnect(Endpoint served) throws IOException {
        LinkedBlockingQueue<Object> inbox = new LinkedBlockingQueue<>();
        RdmaChannel ch = new UcxProvider().connect(served.socketAddress(), Duration.ofSeconds(10),
                new ChannelHandler() {
                    @Override
                    public void onMessage(ByteBuffer message) {
                        inbox.add(ByteBuffer.allocate(message.remaining()).put(message.duplicate()).flip());
                    }

                    @Override
                    public void onError(IOException cause) {
                        inbox.add(cause);
                    }
                });
        return new ByteChannel() {
            private boolean open = true;
            private ByteBuffer pending = ByteBuffer.allocate(0);

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
                        throw new java.io.InterruptedIOException();
                    }
                    if (next == null) {
                        throw new java.net.SocketTimeoutException("raw read: nothing within 30 s");
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
                java.util.concurrent.CompletableFuture<Void> sent = new java.util.concurrent.CompletableFuture<>();
                ch.send(src.duplicate(), new Completion() {
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
                ch.close();
            }
        };
    }
}
