package io.rdmacomm.rdma.verbs;

import io.rdmacomm.api.Endpoint;
import io.rdmacomm.rdma.spi.ChannelHandler;
import io.rdmacomm.rdma.spi.Completion;
import io.rdmacomm.rdma.spi.RdmaChannel;
import io.rdmacomm.rdma.spi.RdmaListener;
import io.rdmacomm.testkit.TransportUnderTest;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.InetSocketAddress;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.channels.ByteChannel;
import java.nio.channels.ClosedChannelException;
import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The contract kit's hooks for {@code rdma://...?provider=verbs}: servers on {@code rdmacomm.verbs.host} (default
 * 127.0.0.1, which rdma-cm maps to the first RDMA device; give an address of an RDMA interface where that does not
 * work), raw connections that are bare provider channels (bytes travel as control messages, with no engine
 * handshake), and silent servers that accept at the provider level and never answer.
 */
final class VerbsTestHooks {
    private static final Duration WAIT = Duration.ofSeconds(30);

    private VerbsTestHooks() {
    }

    static String host() {
        return System.getProperty("rdmacomm.verbs.host", "127.0.0.1");
    }

    static TransportUnderTest transport() {
        return TransportUnderTest.of("rdma://" + host() + ":0?provider=verbs")
                .withRawConnector(VerbsTestHooks::rawConnect)
                .withSilentServer(VerbsTestHooks::silentServer)
                .withSkipReason(() -> new VerbsProvider().unavailabilityCause());
    }

    static ByteChannel rawConnect(Endpoint served) throws IOException {
        RawChannel raw = new RawChannel();
        raw.channel = new VerbsProvider().connect(served.socketAddress(), WAIT, raw);
        return raw;
    }

    static TransportUnderTest.SilentServer silentServer(TransportUnderTest t) throws IOException {
        ChannelHandler mute = new ChannelHandler() {
            @Override
            public void onMessage(ByteBuffer message) {
            }

            @Override
            public void onError(IOException cause) {
            }
        };
        BlockingQueue<RdmaChannel> accepted = new LinkedBlockingQueue<>();
        RdmaListener l = new VerbsProvider().listen(new InetSocketAddress(host(), 0), ch -> {
            accepted.add(ch);
            return mute;
        });
        return TransportUnderTest.SilentServer.of(Endpoint.of("rdma", host(), l.address().getPort())
                .with(io.rdmacomm.api.EndpointOption.PROVIDER, "verbs"), () -> {
                    l.close();
                    for (RdmaChannel ch = accepted.poll(); ch != null; ch = accepted.poll()) {
                        ch.close();
                    }
                });
    }

    /** A provider channel as a byte channel: each write is one or more control messages. */
    private static final class RawChannel implements ByteChannel, ChannelHandler {
        private static final byte[] END = new byte[0];
        private final BlockingQueue<byte[]> received = new LinkedBlockingQueue<>();
        private ByteBuffer current = ByteBuffer.allocate(0);
        private volatile RdmaChannel channel;
        private volatile boolean open = true;

        @Override
        public void onMessage(ByteBuffer message) {
            byte[] b = new byte[message.remaining()];
            message.get(b);
            received.add(b);
        }

        @Override
        public void onError(IOException cause) {
            received.add(END);
        }

        @Override
        public int read(ByteBuffer dst) throws IOException {
            if (!open) {
                throw new ClosedChannelException();
            }
            if (!current.hasRemaining()) {
                byte[] next;
                try {
                    next = received.poll(WAIT.toMillis(), TimeUnit.MILLISECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new InterruptedIOException();
                }
                if (next == null) {
                    throw new SocketTimeoutException("nothing from the verbs peer within " + WAIT);
                }
                if (next == END) {
                    received.add(END);
                    return -1;
                }
                current = ByteBuffer.wrap(next);
            }
            int n = Math.min(dst.remaining(), current.remaining());
            dst.put(dst.position(), current, current.position(), n);
            dst.position(dst.position() + n);
            current.position(current.position() + n);
            return n;
        }

        @Override
        public int write(ByteBuffer src) throws IOException {
            int total = src.remaining();
            while (src.hasRemaining()) {
                int n = Math.min(src.remaining(), channel.maxMessageSize());
                ByteBuffer part = src.slice(src.position(), n);
                CompletableFuture<Void> done = new CompletableFuture<>();
                channel.send(part, new Completion() {
                    @Override
                    public void completed() {
                        done.complete(null);
                    }

                    @Override
                    public void failed(IOException cause) {
                        done.completeExceptionally(cause);
                    }
                });
                try {
                    done.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
                } catch (ExecutionException e) {
                    throw e.getCause() instanceof IOException io ? io : new IOException(e.getCause());
                } catch (TimeoutException e) {
                    throw new SocketTimeoutException("send to the verbs peer did not complete within " + WAIT);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new InterruptedIOException();
                }
                src.position(src.position() + n);
            }
            return total;
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
}
